"""The daemon's search index, kept in a worker process that exits when idle (``RemoteIndex``).

chromadb, numpy and the embedding model (torch) hold hundreds of MB; the daemon imports none of
them. The first request spawns ``python -m routine.memory.worker``, which opens the index and
answers over a socket pair; after ``memory.unload_after`` seconds with nothing asked, the daemon
closes the socket and the worker closes the index and exits. The next request spawns it again.
The writer's lock (``state/index.lock``) is taken by the daemon and shared with its worker (the
same open file): one writer, as before. ``RemoteIndex`` has the methods of ``VaultIndex`` that
the daemon uses, so the runner, the control socket and the index feed do not know the difference.

Messages, one JSON object a line:
  daemon → worker: the config first (``hello``); then ``{"id", "op", …}``; ``{"op": "interrupt"}``;
                   ``{"embed", "vectors" | "error"}``, the answer to an embedding request.
  worker → daemon: ``{"id", "event": "progress", …}``; ``{"id", "result" | "error"}``;
                   ``{"embed", "texts"}``: Ollama embeddings are made by the daemon, under its
                   model manager's leases, so the embedding model counts toward ``max_resident``.
A worker that dies fails what it was asked with ``SearchIndexError``; the next request spawns a
new one. A search or ``describe`` fails after ``REPLY_SECONDS`` in which the worker said nothing
at all (behind a first build it waits while the build reports its batches); a pass (reconcile,
rebuild, update_paths) runs as long as the worker lives.
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import os
import pickle
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable

from routine import errors, paths
from routine.config.model import Config
from routine.config.providers import served_embedding
from routine.errors import RoutineError, SearchIndexError
from routine.memory.embedder import TextEmbedder, make_embedder
from routine.memory.health import IndexDescription
from routine.memory.lock import take_lock
from routine.memory.retrieve import Hit
from routine.memory.sync import IndexStats, Progress

if TYPE_CHECKING:
    from routine.models.manager import ModelManager

log = logging.getLogger(__name__)

REPLY_SECONDS = 120.0  # a search's longest silence from the worker (a fresh one loads chromadb and the model)
STOP_SECONDS = 10.0  # a retiring worker closes its index within this, else it is killed
WORKER_MODULE = "routine.memory.worker"

Message = dict[str, Any]


def error_to_dict(exc: BaseException) -> Message:
    """An error as it crosses the socket: its class, sentence, fix and simple attributes."""
    if isinstance(exc, RoutineError):
        attrs = {k: v for k, v in vars(exc).items()
                 if k not in ("message", "fix") and isinstance(v, (str, int, float, bool, type(None)))}
        return {"type": type(exc).__name__, "message": exc.message, "fix": exc.fix, "attrs": attrs}
    return {"type": "SearchIndexError", "message": f"The search index failed ({type(exc).__name__}: {exc}).",
            "fix": "run the command again; the daemon's log has the details."}


def error_from_dict(data: Message) -> RoutineError:
    """The same error class again (``ServerUnreachable`` stays one, for alerts and retries)."""
    cls = getattr(errors, str(data.get("type")), None)
    if not (isinstance(cls, type) and issubclass(cls, RoutineError)):
        cls = SearchIndexError
    exc = cls.__new__(cls)
    RoutineError.__init__(exc, str(data.get("message")), data.get("fix"))
    exc.__dict__.update(data.get("attrs") or {})
    return exc


def encode(message: Message) -> bytes:
    return (json.dumps(message) + "\n").encode()


def worker_gone(code: int | None) -> Message:
    how = "" if code is None else f" (exit code {code})"
    return {"error": {"type": "SearchIndexError", "message": f"The search index's worker process stopped{how}.",
                      "fix": "run the command again (a new worker starts); if it keeps stopping, "
                             "the daemon's log says why."}}


class Channel:
    """One worker process and the socket to it; replies routed to their request by id."""

    def __init__(self, proc: subprocess.Popen[bytes], sock: socket.socket,
                 on_embed: Callable[["Channel", Message], None]):
        self.proc, self.sock, self._on_embed = proc, sock, on_embed
        self.closed = False
        self.retiring = False
        self.last_heard = time.monotonic()  # when the worker last said anything (a sign of work)
        self._send_lock = threading.Lock()
        self._guard = threading.Lock()
        self._waiting: dict[int, queue.Queue[Message]] = {}
        self._ids = itertools.count(1)
        self._reader = threading.Thread(target=self._read, name="index-worker", daemon=True)
        self._reader.start()

    def send(self, message: Message) -> None:
        with self._send_lock:
            self.sock.sendall(encode(message))

    def open_request(self) -> tuple[int, queue.Queue[Message]]:
        with self._guard:
            if self.closed:
                raise error_from_dict(worker_gone(self.proc.poll())["error"])
            rid, replies = next(self._ids), queue.Queue[Message]()
            self._waiting[rid] = replies
        return rid, replies

    def close_request(self, rid: int) -> None:
        with self._guard:
            self._waiting.pop(rid, None)

    def _read(self) -> None:
        try:
            with self.sock.makefile("rb") as stream:
                for line in stream:
                    self.last_heard = time.monotonic()
                    message = json.loads(line)
                    if "embed" in message:
                        self._on_embed(self, message)
                        continue
                    with self._guard:
                        replies = self._waiting.get(message.get("id"))
                    if replies is not None:
                        replies.put(message)
        except (OSError, ValueError) as exc:
            log.warning("the search index's worker sent something unreadable (%s); stopping it", exc)
            self.proc.kill()
        code = self._reap()
        with self._guard:
            self.closed = True
            waiting = list(self._waiting.values())
        if not self.retiring:
            log.error("the search index's worker process stopped unexpectedly (exit code %s); "
                      "the next request starts a new one", code)
        for replies in waiting:
            replies.put(worker_gone(code))

    def _reap(self) -> int | None:
        try:
            return self.proc.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:  # it closed the socket but lingers: it is of no use now
            self.proc.kill()
            return self.proc.wait()

    def stop(self, timeout: float) -> None:
        """Ask the worker to close the index and exit (end of input); kill it after ``timeout``."""
        self.retiring = True
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:  # a pass that cannot stop (a model loading): killed,
            log.warning("the search index's worker did not stop within %.0fs; killed it (what it wrote is safe)",
                        timeout)  # its writes are crash-safe, as after a kill
            self.proc.kill()
            self.proc.wait()
        self._reader.join(STOP_SECONDS)
        self.sock.close()


class RemoteIndex:
    """The daemon's search index: requests to a worker process spawned on demand."""

    def __init__(self, config: Config, state_dir: Path | None = None, models: ModelManager | None = None) -> None:
        self.config = config
        self.state_dir = state_dir or paths.state_dir()
        self.lock_path = self.state_dir / "index.lock"
        self.idle_after = config.memory.unload_after
        # Ollama embeddings are made here (the model manager's leases); a local model in the worker.
        spec = config.memory.embedding_model
        self.embedder: TextEmbedder | None = (
            make_embedder(config, self.state_dir, models) if served_embedding(spec) else None
        )
        self._guard = threading.Lock()
        self._channel: Channel | None = None
        self._lock_file: IO[str] | None = None
        self._busy = 0
        self._timer: threading.Timer | None = None
        self._stop = threading.Event()
        self._closed = False

    # --- what the daemon asks --------------------------------------------------------------

    def reconcile(self, progress: Progress | None = None) -> IndexStats:
        return IndexStats(**self._request("reconcile", progress))

    def rebuild(self, progress: Progress | None = None) -> IndexStats:
        return IndexStats(**self._request("rebuild", progress))

    def update_paths(self, changed: Iterable[str | os.PathLike[str]]) -> IndexStats:
        return IndexStats(**self._request("update_paths", None, paths=[os.fspath(p) for p in changed]))

    def search(self, query: str, k: int = 6, reads: list[str] | tuple[str, ...] | None = None,
               exclude: Iterable[str] = (), refresh: bool = True, progress: Progress | None = None) -> list[Hit]:
        """``VaultIndex.search``'s signature; the worker's index follows the vault (no refresh)."""
        found = self._request("search", progress, True, query=query, k=k,
                              reads=None if reads is None else list(reads), exclude=sorted(exclude))
        return [Hit.from_dict(d) for d in found]

    def describe(self) -> IndexDescription:
        description: IndexDescription = self._request("describe", None, True)
        return description

    @property
    def worker_pid(self) -> int | None:
        """The worker's process id while one runs (for status and tests)."""
        channel = self._channel
        return channel.proc.pid if channel is not None and not channel.closed else None

    def stopping(self) -> bool:
        return self._stop.is_set()

    def interrupt(self) -> None:
        """A running pass stops after its current batch (at shutdown); what it wrote stays."""
        self._stop.set()
        channel = self._channel
        if channel is not None and not channel.closed:
            try:
                channel.send({"op": "interrupt"})
            except OSError:
                pass

    def close(self, timeout: float | None = None) -> bool:
        """Close for good: the worker closes the index (a pass stops after its batch) and exits,
        or is killed after ``timeout``. True: nothing of the index is left running."""
        self.interrupt()
        with self._guard:
            self._closed = True
            self._cancel_timer()
            channel, self._channel = self._channel, None
        if channel is not None:
            channel.stop(STOP_SECONDS if timeout is None else timeout)
        if self._lock_file is not None:
            self._lock_file.close()  # releases the writer's lock
            self._lock_file = None
        if self.embedder is not None:
            self.embedder.release()
        return True

    # --- the worker's life ------------------------------------------------------------------

    def _request(self, op: str, progress: Progress | None, bounded: bool = False, **args: object) -> Any:
        """``bounded``: give up after ``REPLY_SECONDS`` of silence from the worker."""
        with self._guard:
            if self._closed:
                raise SearchIndexError("The search index was closed (the daemon is stopping or reloading).",
                                       "run the command again.")
            if self._channel is None or self._channel.closed:
                self._channel = self._spawn()
            channel = self._channel
            self._busy += 1
            self._cancel_timer()
        try:
            rid, replies = channel.open_request()
        except RoutineError:
            self._done()
            raise
        try:
            try:
                channel.send({"id": rid, "op": op, **args})
            except OSError:  # it died just now: its reader tells the request so
                pass
            return self._await(channel, replies, progress, bounded)
        finally:
            channel.close_request(rid)
            self._done()

    def _done(self) -> None:
        with self._guard:
            self._busy -= 1
            if not self._busy and not self._closed:
                self._arm_timer()

    @staticmethod
    def _await(channel: Channel, replies: queue.Queue[Message], progress: Progress | None, bounded: bool) -> Any:
        asked = time.monotonic()
        while True:
            limit = None
            if bounded:  # silence counts: another request's progress is the worker at work
                limit = max(asked, channel.last_heard) + REPLY_SECONDS - time.monotonic()
                if limit <= 0:
                    raise SearchIndexError(f"The search index's worker said nothing for {REPLY_SECONDS:.0f}s.",
                                           "run the command again; if it recurs, restart the daemon "
                                           "(`systemctl --user restart routine`) and see its log.")
            try:
                message = replies.get(timeout=limit)
            except queue.Empty:
                continue
            if message.get("event") == "progress":
                if progress is not None:
                    progress(message["what"], message["count"], message["total"])
                continue
            if "error" in message:
                raise error_from_dict(message["error"])
            return message["result"]

    def _spawn(self) -> Channel:
        """A new worker (called holding ``_guard``); the writer's lock is taken the first time."""
        if self._lock_file is None:
            self._lock_file = take_lock(self.lock_path, self._stop.is_set)
        ours, theirs = socket.socketpair()
        lock_fd = self._lock_file.fileno()
        package_root = str(Path(__file__).resolve().parents[2])  # the same routine, however it was found
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        try:
            proc = subprocess.Popen([sys.executable, "-m", WORKER_MODULE, str(theirs.fileno()), str(lock_fd)],
                                    pass_fds=(theirs.fileno(), lock_fd), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, env=env)
        except OSError as exc:
            ours.close()
            raise SearchIndexError(
                f"The search index's worker process could not be started ({exc}).",
                "check the box's free memory and process limits, then run the command again.",
            ) from None
        finally:
            theirs.close()
        channel = Channel(proc, ours, self._embed_for)
        hello = {"config": base64.b64encode(pickle.dumps(self.config)).decode(), "state_dir": str(self.state_dir),
                 "log_level": logging.getLogger().getEffectiveLevel()}
        try:
            channel.send(hello)
        except OSError:
            pass  # it died at once: its reader fails the first request
        log.info("started the search index's worker (process %d)", proc.pid)
        return channel

    def _arm_timer(self) -> None:
        self._timer = threading.Timer(self.idle_after, self._retire)
        self._timer.daemon = True
        self._timer.start()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _retire(self) -> None:
        """Idle for ``memory.unload_after``: the worker closes the index and exits."""
        with self._guard:
            if self._busy or self._closed or self._channel is None or self._timer is not threading.current_thread():
                return
            channel, self._channel, self._timer = self._channel, None, None
            channel.stop(STOP_SECONDS)  # holding the guard: a new worker waits until this one is gone
        log.info("the search index's worker exited after %.0fs idle", self.idle_after)

    def _embed_for(self, channel: Channel, message: Message) -> None:
        """The worker asks for Ollama embeddings: made on a thread here, answered by key."""
        def work() -> None:
            reply: Message = {"embed": message["embed"]}
            try:
                if self.embedder is None:
                    raise SearchIndexError(
                        "The search index's worker asked the daemon for embeddings it does not make.",
                        "restart the daemon.",
                    )
                reply["vectors"] = self.embedder.embed(list(message.get("texts") or []))
            except Exception as exc:
                reply["error"] = error_to_dict(exc)
            try:
                channel.send(reply)
            except OSError:  # the worker is gone; its request failed with it
                pass

        threading.Thread(target=work, name="index-embed", daemon=True).start()
