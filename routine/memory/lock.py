"""The search index's writer lock (``state/index.lock``): one process writes the index.

The daemon takes it once and hands the open file to its index worker (the same open file, so
the lock is theirs together); a CLI command without a daemon takes it for itself.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from pathlib import Path
from typing import IO, Callable

from routine.errors import SearchIndexError

log = logging.getLogger(__name__)

RETRY_SECONDS = 0.2


def take_lock(path: Path, stopped: Callable[[], bool], inherited: int | None = None) -> IO[str]:
    """The lock, waiting while another process holds it (unless ``stopped()``).

    ``inherited``: a descriptor of the lock file already locked by the parent process.
    """
    if inherited is not None:
        f = os.fdopen(inherited, "a+")
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the parent's lock: ours at once
        return f
    path.parent.mkdir(parents=True, exist_ok=True)
    f = open(path, "a+")
    waited = False
    while True:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if stopped():
                f.close()
                raise SearchIndexError("The search index was closed while waiting for another process.",
                                       "run the command again.") from None
            if not waited:
                f.seek(0)
                holder = f.read().strip() or "another routine process"
                log.warning("the search index is in use by %s; waiting for it to finish", holder)
                waited = True
            time.sleep(RETRY_SECONDS)  # flock has no timeout: a short wait between tries
    f.seek(0)
    f.truncate()
    f.write(f"process {os.getpid()}\n")
    f.flush()
    return f
