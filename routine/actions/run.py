"""`routine run`: the daemon in the foreground (what systemd starts)."""

from __future__ import annotations

import logging
import sys

from routine.errors import DaemonError


def run(args) -> int:
    from routine import control

    if control.connect() is not None:
        raise DaemonError(f"A routine daemon is already running (socket {control.socket_path()}).",
                          "stop it first (`systemctl stop routine`), or use `routine status`.")
    if not args.debug:
        logging.getLogger().setLevel(logging.INFO)
        for handler in logging.getLogger().handlers:
            handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    from routine.daemon.app import Daemon

    daemon = Daemon(args.config)
    code = daemon.serve_forever()
    sys.stderr.flush()
    return code
