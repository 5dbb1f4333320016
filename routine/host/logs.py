"""Logging: structured records to journald under systemd, plain lines anywhere else.

Under systemd, stderr is connected to the journal and ``$JOURNAL_STREAM`` names that stream
(``device:inode``); when it matches our stderr, records go to journald's native socket
instead, one datagram each, with fields a person can filter on:

    journalctl -u routine@alice ROUTINE_RUN=20261122-073000-3f9a
    journalctl --user -u routine ROUTINE_AGENT=strategist -p warning

Fields: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER=routine, LOGGER, THREAD_NAME, CODE_FILE,
CODE_LINE, CODE_FUNC and, inside a run, ROUTINE_RUN, ROUTINE_BLOCK, ROUTINE_AGENT,
ROUTINE_MODEL (from ``routine.runcontext``). The protocol is systemd's documented "native
journal protocol" (what sd_journal_send and systemd-python's JournalHandler write), spoken
here directly so no C extension has to build on the box. Elsewhere (a terminal, a file)
each line is ``LEVEL logger [run ID]: message``: every line of a run carries its run id.
"""

from __future__ import annotations

import logging
import os
import socket
import struct
import sys

from routine import runcontext
from routine.redact import redact_text

JOURNAL_SOCKET = "/run/systemd/journal/socket"
SYSLOG_IDENTIFIER = "routine"
MAX_MESSAGE_BYTES = 48 * 1024  # a datagram must fit the socket buffer; tracebacks rarely come near
_PRIORITY = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4, logging.INFO: 6, logging.DEBUG: 7}


class RunContextFilter(logging.Filter):
    """Puts the current run's fields on every record: record.run, .block, .agent, .model."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = runcontext.current()
        for name in runcontext.FIELDS:
            if not hasattr(record, name):
                setattr(record, name, fields.get(name))
        return True


class RedactFilter(logging.Filter):
    """No secret of a URL reaches a log line, whoever logged it (routine, Apprise, urllib)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "://" in message:
            record.msg, record.args = redact_text(message), None
        if record.exc_info:  # a traceback may quote a URL too: formatted here, redacted; every formatter
            # uses a record's exc_text when it is set, and the record keeps its exc_info for other handlers
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return True


class PlainFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        run = getattr(record, "run", None)
        tag = f" [run {run}]" if run else ""
        text = f"{record.levelname} {record.name}{tag}: {record.getMessage()}"
        if record.exc_text:
            text += "\n" + record.exc_text
        return text


class RunLinesToTheJournal(logging.Filter):
    """For one-shot commands: a run's own log lines stay off the terminal, because the command
    prints the run's outcome once (and `routine runs show ID` has the rest); other lines pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "run", None) is None or record.levelno >= logging.CRITICAL


def journal_socket_path() -> str:
    # Overridable so tests (and containers with a relocated journal) can point elsewhere.
    return os.environ.get("ROUTINE_JOURNAL_SOCKET") or JOURNAL_SOCKET


def _field(name: str, value: object) -> bytes:
    data = str(value).encode("utf-8", errors="replace")
    key = name.encode("ascii")
    if b"\n" in data:
        return key + b"\n" + struct.pack("<Q", len(data)) + data + b"\n"
    return key + b"=" + data + b"\n"


class JournalHandler(logging.Handler):
    """One datagram per record to journald's native socket; plain stderr lines if that fails."""

    def __init__(self, path: str | None = None, level: int = logging.NOTSET):
        super().__init__(level)
        self.path = path or journal_socket_path()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        self._fallback = PlainFormatter()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._sock.sendto(self.encode(record), self.path)
        except OSError:
            try:
                sys.stderr.write(self._fallback.format(record) + "\n")
                sys.stderr.flush()
            except Exception:
                pass
        except Exception:
            self.handleError(record)

    def encode(self, record: logging.LogRecord) -> bytes:
        message = record.getMessage()
        if record.exc_text:
            message += "\n" + record.exc_text
        raw = message.encode("utf-8", errors="replace")
        if len(raw) > MAX_MESSAGE_BYTES:
            message = raw[:MAX_MESSAGE_BYTES].decode("utf-8", errors="ignore") + "\n… (truncated)"
        fields = [
            _field("MESSAGE", message),
            _field("PRIORITY", _PRIORITY.get(record.levelno, 6 if record.levelno < logging.WARNING else 3)),
            _field("SYSLOG_IDENTIFIER", SYSLOG_IDENTIFIER),
            _field("LOGGER", record.name),
            _field("THREAD_NAME", record.threadName),
            _field("CODE_FILE", record.pathname),
            _field("CODE_LINE", record.lineno),
            _field("CODE_FUNC", record.funcName),
        ]
        for name in runcontext.FIELDS:
            value = getattr(record, name, None)
            if value:
                fields.append(_field(f"ROUTINE_{name.upper()}", value))
        return b"".join(fields)

    def close(self) -> None:
        self._sock.close()
        super().close()


def stderr_is_journal() -> bool:
    """True when systemd connected our stderr to the journal (``$JOURNAL_STREAM`` matches it)."""
    value = os.environ.get("JOURNAL_STREAM", "")
    try:
        dev, ino = (int(part) for part in value.split(":"))
        st = os.fstat(sys.stderr.fileno())
    except (ValueError, OSError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (dev, ino)


def setup(level: int) -> logging.Handler:
    """Install the one root handler (journald or plain stderr lines) at ``level``."""
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
        old.close()
    if stderr_is_journal():
        handler: logging.Handler = JournalHandler()
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(PlainFormatter())
    handler.addFilter(RunContextFilter())
    handler.addFilter(RedactFilter())
    root.addHandler(handler)
    root.setLevel(level)
    return handler
