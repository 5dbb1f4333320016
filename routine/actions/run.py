"""`routine run`: the daemon in the foreground (what systemd starts)."""

from __future__ import annotations

import argparse
import faulthandler
import logging
import os
import sys

from routine.daemon import client
from routine.daemon.app import Daemon
from routine.errors import DaemonError
from routine.host.daemonlock import hold


def run(args: argparse.Namespace) -> int:
    try:
        sock = client.connect(wait=0)
    except DaemonError:
        sock = None  # a daemon holds the lock but answers elsewhere (or not yet): hold() says which
    if sock is not None:
        sock.close()
        raise DaemonError(f"A routine daemon is already running (socket {client.socket_path()}).",
                          "stop it first (`systemctl stop routine`), or use `routine status`.")

    held = hold()  # until this process ends
    if not args.debug and "ROUTINE_LOG_LEVEL" not in os.environ:
        logging.getLogger().setLevel(logging.INFO)  # the daemon's journal says what it does
        logging.getLogger("apscheduler").setLevel(logging.WARNING)  # not its per-job chatter at every start
    # A hang that the watchdog ends (SIGABRT) leaves every thread's stack in the journal.
    faulthandler.enable()

    daemon = Daemon(args.config)
    try:
        return daemon.serve_forever()
    finally:
        sys.stderr.flush()
        held.close()

