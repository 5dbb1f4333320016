"""The search index's worker process, spawned by the daemon's ``RemoteIndex`` (``remote.py``).

    python -m routine.memory.worker SOCKET_FD LOCK_FD

It owns the ``VaultIndex`` (chromadb, numpy, the embedding model) so that the daemon holds none
of them. Each request is answered on a thread of its own (a search need not wait behind a long
pass more than the index itself makes it); index passes run at background priority. When the
daemon closes the socket (idle for ``memory.unload_after``, stopping, or gone) the worker closes
the index cleanly and exits. With ``memory.embedding_model: ollama:…`` it asks the daemon for
the vectors, so the daemon's model manager counts that model.
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
import sys
import threading
from pathlib import Path
from typing import IO, Any, Callable

from routine.causes import is_disk_full
from routine.config.model import Config
from routine.config.providers import served_embedding
from routine.errors import RoutineError, SearchIndexError
from routine.host import logs
from routine.host.supervise import lower_priority
from routine.memory.embedder import Embedder, embedder_identity
from routine.memory.remote import Message, encode, error_from_dict, error_to_dict

log = logging.getLogger(__name__)

PASSES = ("reconcile", "rebuild", "update_paths")


class DaemonEmbedder(Embedder[None]):
    """Embeddings made by the daemon (Ollama, under its model manager): asked over the socket."""

    def __init__(self, spec: str, ask: Callable[[list[str]], list[list[float]]]):
        super().__init__(unload_after=0.0)
        self.identity = embedder_identity(spec)
        self._ask = ask

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self._ask(texts) if texts else []

    def release(self) -> None:
        pass  # nothing is loaded here


class Worker:
    def __init__(self, sock: socket.socket, config: Config, state_dir: Path, lock_fd: int):
        from routine.memory.index import VaultIndex  # lazy: numpy, only in the worker process itself

        self.sock = sock
        self._send_lock = threading.Lock()
        self._guard = threading.Lock()
        self._asked: dict[int, queue.Queue[Message]] = {}  # embedding requests to the daemon
        self._keys = itertools.count(1)
        self._gone = False
        spec = config.memory.embedding_model
        embedder = DaemonEmbedder(spec, self._ask_daemon) if served_embedding(spec) else None
        self.index = VaultIndex(config, state_dir, embedder=embedder, lock_fd=lock_fd)
        self.index.follows_vault = True  # the daemon's vault watcher feeds update_paths

    def send(self, message: Message) -> None:
        try:
            with self._send_lock:
                self.sock.sendall(encode(message))
        except OSError:  # the daemon is gone: nobody is waiting for this any more
            pass

    def serve(self, stream: IO[bytes]) -> None:
        """Take requests until the daemon closes the socket, then close the index."""
        for line in stream:
            message = json.loads(line)
            if "embed" in message:
                self._answered(message)
            elif message.get("op") == "interrupt":  # the daemon is stopping: a pass ends now
                self.index.interrupt()
                self._fail_asked()  # its embeddings asked of the daemon will not come
            else:
                threading.Thread(target=self.handle, args=(message,), name=f"index-{message.get('op')}",
                                 daemon=True).start()
        self._fail_asked()
        self.index.close()

    def handle(self, message: Message) -> None:
        rid, op = message.get("id"), str(message.get("op"))

        def progress(what: str, done: int, total: int) -> None:
            self.send({"id": rid, "event": "progress", "what": what, "count": done, "total": total})

        try:
            if op in PASSES:
                lower_priority()  # a first build takes minutes of CPU: model calls go first
            reply: Message = {"id": rid, "result": self.run(op, message, progress)}
        except Exception as exc:
            if not isinstance(exc, RoutineError):  # a full disk is said in one line (and an alert)

                log.error("the search index failed a %s: %s", op, exc, exc_info=not is_disk_full(exc))
            reply = {"id": rid, "error": error_to_dict(exc)}
        self.send(reply)

    def run(self, op: str, message: Message, progress: Callable[[str, int, int], None]) -> Any:
        index = self.index
        if op == "reconcile":
            return index.reconcile(progress).as_dict()
        if op == "rebuild":
            return index.rebuild(progress).as_dict()
        if op == "update_paths":
            return index.update_paths(list(message.get("paths") or [])).as_dict()
        if op == "search":
            hits = index.search(str(message.get("query") or ""), int(message.get("k") or 6), message.get("reads"),
                                exclude=message.get("exclude") or (), progress=progress)
            return [hit.as_dict() for hit in hits]
        if op == "describe":
            return index.describe()
        raise SearchIndexError(f"The search index's worker was asked for {op!r}, which it does not know.",
                               "restart the daemon (its worker may be of another version).")

    # --- embeddings made by the daemon --------------------------------------------------------

    def _ask_daemon(self, texts: list[str]) -> list[list[float]]:
        answer: queue.Queue[Message] = queue.Queue(maxsize=1)
        with self._guard:
            if self._gone:
                raise SearchIndexError("The daemon closed the search index.", "run the command again.")
            key = next(self._keys)
            self._asked[key] = answer
        self.send({"embed": key, "texts": texts})
        reply = answer.get()
        if "error" in reply:
            raise error_from_dict(reply["error"])
        vectors: list[list[float]] = reply["vectors"]
        return vectors

    def _answered(self, message: Message) -> None:
        with self._guard:
            answer = self._asked.pop(message["embed"], None)
        if answer is not None:
            answer.put(message)

    def _fail_asked(self) -> None:
        with self._guard:
            self._gone = True
            waiting, self._asked = list(self._asked.values()), {}
        closed = error_to_dict(SearchIndexError("The daemon closed the search index.", "run the command again."))
        for answer in waiting:
            answer.put({"error": closed})


def main(argv: list[str]) -> int:
    sock = socket.socket(fileno=int(argv[0]))
    with sock.makefile("rb") as stream:
        hello = json.loads(stream.readline() or "{}")
        if not hello:
            return 0  # the daemon went before saying anything

        logs.setup(int(hello.get("log_level", logging.INFO)))
        config: Config = pickle.loads(base64.b64decode(hello["config"]))
        worker = Worker(sock, config, Path(hello["state_dir"]), int(argv[1]))
        worker.serve(stream)
    logging.shutdown()
    # A thread may still be inside the embedding model (a search the daemon gave up on):
    # finalizing the interpreter under it aborts, and everything of ours is closed.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
