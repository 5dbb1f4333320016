"""The vault search index: one writer, incremental, and rebuilt from the vault when in doubt.

    index = VaultIndex(config)
    index.open()                      # lock, health check (rebuild if damaged)
    index.reconcile()                 # the whole vault: a stat per unchanged note
    index.update_paths(["Inbox/a.md", "Old/b.md"])   # what a watcher saw change or go
    hits = index.search("deadlines", k=6, reads=agent.reads)
    index.close()

Files, under ``state/``: ``index.lock`` (held by the one process that may write: the daemon
when it runs, else the CLI command) and ``index/`` (``chroma/`` the vectors, ``manifest.sqlite3``
what was indexed from which note, ``meta.json`` the format and embedding model, ``open-by``
present while open). Deleting ``index/`` loses nothing: the next open rebuilds it.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Iterable

from routine import paths
from routine.config.model import Config
from routine.errors import RoutineError, SearchIndexError
from routine.memory import health
from routine.memory.chunks import CHUNKER_VERSION
from routine.memory.embedder import TextEmbedder, make_embedder
from routine.memory.lock import take_lock
from routine.memory.manifest import Manifest
from routine.memory.retrieve import ranked_hits
from routine.memory.store import ChromaStore, DamagedStore
from routine.memory.sync import IndexStats, Progress, apply_changes, scan_vault
from routine.memory.vectors import VectorTable
from routine.vault.presence import vault_problem
from routine.watch.filters import is_searchable

if TYPE_CHECKING:
    from routine.memory.retrieve import Hit
    from routine.models.manager import ModelManager

log = logging.getLogger(__name__)

FORMAT = 1 * 1000 + CHUNKER_VERSION  # bump the first factor when the stored layout changes


class VaultIndex:
    def __init__(self, config: Config, state_dir: Path | None = None, embedder: TextEmbedder | None = None,
                 models: ModelManager | None = None, lock_fd: int | None = None) -> None:
        state_dir = state_dir or paths.state_dir()
        self.vault = config.vault
        self.folder = state_dir / "index"
        self.lock_path = state_dir / "index.lock"
        self.lock_fd = lock_fd  # the writer's lock, already taken by the parent (the daemon's worker)
        self.chunk_chars = config.memory.chunk_chars
        # routine's own folders: agents' searches leave them out unless their reads name them.
        self.own_folders = (config.layout.archive, config.layout.agents)
        # models: the process's model manager, so Ollama embeddings count toward max_resident.
        self.embedder = embedder or make_embedder(config, state_dir, models)
        # The vault watcher sets this once it feeds update_paths(): then a search need not
        # reconcile the whole vault first.
        self.follows_vault = False
        # Until a first reconcile has finished here, the watcher's changes are not the whole story:
        # a search reconciles first (or waits for the pass under way), even when it follows the vault.
        self._level = False
        self.rebuilt: str | None = None  # why open() found the index unusable
        self._write = threading.RLock()
        self._stop = threading.Event()  # set by interrupt(): a long pass stops between batches
        self._closed = False
        self._lock_file: IO[str] | None = None
        self.manifest: Manifest | None = None
        self.store: ChromaStore | None = None
        self._table: VectorTable | None = None  # loaded on the first search, dropped when idle
        self.embedder.on_release = self._drop_table

    # --- opening and closing ----------------------------------------------------------------

    def expected_meta(self) -> health.IndexMeta:
        return {"format": FORMAT, "embedder": self.embedder.identity, "chunk_chars": self.chunk_chars,
                "chromadb": health.chromadb_version()}

    def open(self) -> "VaultIndex":
        """Take the writer's lock, check the index on disk, rebuild it if it is unusable."""
        with self._write:
            if self.manifest is not None:
                return self
            if self._closed:
                raise SearchIndexError("The search index was closed (the daemon is stopping or reloading).",
                                       "run the command again.")
            self._take_lock()
            try:
                verdict = health.examine(self.folder, self.expected_meta())
                if not verdict.usable:
                    self._discard(verdict.reason)
                elif verdict.reason:
                    log.info("search index %s: checked, it is sound", verdict.reason)
                self._open_files()
                if verdict.usable:
                    self._check_contents(thorough=verdict.unclean)
            except BaseException:
                self._close_files()
                raise
            return self

    @property
    def opened_manifest(self) -> Manifest:
        if self.manifest is None:
            raise SearchIndexError("The search index is not open (it was closed).", "run the command again.")
        return self.manifest

    @property
    def opened_store(self) -> ChromaStore:
        if self.store is None:
            raise SearchIndexError("The search index is not open (it was closed).", "run the command again.")
        return self.store

    def stopping(self) -> bool:
        return self._stop.is_set()

    def interrupt(self) -> None:
        """Make a running pass stop after its current batch (at shutdown); what it wrote stays."""
        self._stop.set()

    def close(self, timeout: float | None = None) -> bool:
        """Close for good (a closed index is not opened again): a running pass stops first.

        ``timeout``: wait at most this long for the pass (at shutdown: loading the embedding
        model cannot be interrupted). False when it was left running: what it wrote is safe,
        as after a kill (crash-safe write order), and the next start checks the index.
        """
        self.interrupt()
        self._closed = True
        if not self._write.acquire(timeout=-1 if timeout is None else timeout):
            log.warning("search index: a pass is still busy after %.0fs; leaving it (the next start checks the index)",
                        timeout)
            return False
        try:
            self._close_files()
        finally:
            self._write.release()
        return True

    def _close_files(self) -> None:
        with self._write:
            self._table = None
            if self.store is not None:
                self.store.close()
                self.store = None
            if self.manifest is not None:
                self.manifest.close()
                self.manifest = None
                self._level = False
                (self.folder / health.MARKER).unlink(missing_ok=True)  # closed cleanly
            if self._lock_file is not None:
                self._lock_file.close()  # releases the lock
                self._lock_file = None
            self.embedder.release()

    def __enter__(self) -> VaultIndex:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take_lock(self) -> None:
        inherited, self.lock_fd = self.lock_fd, None  # an inherited descriptor is used once
        self._lock_file = take_lock(self.lock_path, self._stop.is_set, inherited)

    def _discard(self, reason: str) -> None:
        if reason == "missing":
            log.info("no search index yet: building it from the vault")
        elif reason == "rebuild asked for":
            log.info("rebuilding the search index from the vault, as asked")
        else:
            log.warning("search index %s: rebuilding it from the vault", reason)
        self.rebuilt = reason
        self._wipe()

    def _wipe(self) -> None:
        if self.folder.exists():
            doomed = self.folder.with_name("index.discarded")
            shutil.rmtree(doomed, ignore_errors=True)
            os.replace(self.folder, doomed)  # one step: never a half-deleted index in place
            shutil.rmtree(doomed, ignore_errors=True)

    def _open_files(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / health.MARKER).write_text(f"{os.getpid()}\n")
        try:
            self.manifest = Manifest(self.folder / "manifest.sqlite3")
            if self.rebuilt is None and not self.manifest.sound():
                raise SearchIndexError("the manifest is damaged")
        except Exception as exc:  # sqlite3.DatabaseError and kin: a damaged cache is rebuilt
            if self.rebuilt is not None:
                raise SearchIndexError(f"The search index in {self.folder} cannot be created ({exc}).",
                                       "check that the state dir is writable and not full.") from None
            if self.manifest is not None:
                self.manifest.close()
                self.manifest = None
                self._level = False
            self._discard(f"has a damaged manifest ({exc})")
            return self._open_files()
        self.store = ChromaStore(self.folder / "chroma")
        health.write_meta(self.folder, self.expected_meta())

    def _check_contents(self, thorough: bool) -> None:
        """Make the manifest and the vector store agree (after a crash, or if counts differ)."""
        try:
            notes, stored = self.opened_manifest.counts()
            if not thorough and self.opened_store.count() == stored:
                return
            in_store = self.opened_store.all_ids()
        except Exception as exc:  # chromadb raises its own errors on a damaged store
            self._restart_empty(f"could not be read ({exc})")
            return
        known = self.opened_manifest.all_chunks()
        orphans = [i for i in in_store if i not in known]
        lost = {path for i, (path, was_stored) in known.items() if was_stored and i not in in_store}
        if orphans:
            self.opened_store.delete(orphans)
        self.opened_manifest.restate({i for i in known if i in in_store}, lost)
        if orphans or lost:
            log.warning("search index: %d stray chunks removed, %d notes to index again after an abrupt stop",
                        len(orphans), len(lost))

    def _restart_empty(self, reason: str) -> None:
        with self._write:
            self._table = None
            self.opened_store.close()
            self.opened_manifest.close()
            self.manifest = None
            self._level = False
            self._discard(reason)
            self._open_files()

    # --- keeping up with the vault ----------------------------------------------------------

    def rebuild(self, progress: Progress | None = None) -> IndexStats:
        """Forget everything and index the whole vault again."""
        self.open()
        with self._write:
            self._restart_empty("rebuild asked for")
            return self.reconcile(progress)

    def reconcile(self, progress: Progress | None = None) -> IndexStats:
        """Bring the index level with the whole vault: new, changed, moved and deleted notes."""
        self.open()
        with self._write:
            started = time.monotonic()

            missing = vault_problem(self.vault)
            if missing:  # an unmounted (or empty) vault must not empty the index
                raise SearchIndexError(f"{missing[:1].upper()}{missing[1:]}, so the search index was left as it is.",
                                       "mount or restore the vault, or correct `vault:` in routine.yaml.")
            on_disk = scan_vault(self.vault)
            known = self.opened_manifest.notes()
            candidates = [rel for rel, st in on_disk.items() if known.get(rel, (None, None))[:2] != st]
            gone = [rel for rel in known if rel not in on_disk]
            stats = self._apply_or_discard(candidates, gone, known, progress)
            if stats is None:
                return self.reconcile(progress)
            stats.unchanged += len(on_disk) - len(candidates)
            self._level = True
            return self._finish(stats, started)

    def update_paths(self, changed: Iterable[str | os.PathLike[str]]) -> IndexStats:
        """Index what a watcher saw: created, modified, deleted or moved notes and folders.

        Paths may be absolute or vault-relative; give both ends of a move. Anything outside the
        vault, hidden, or not a note is ignored.
        """
        self.open()
        with self._write:
            started = time.monotonic()
            known = self.opened_manifest.notes()
            candidates: dict[str, None] = {}
            gone: dict[str, None] = {}
            for rel in filter(None, (self._relative(p) for p in changed)):
                full = self.vault / rel
                if full.is_dir() and not full.is_symlink():
                    for note, st in scan_vault(self.vault, rel).items():
                        if known.get(note, (None, None))[:2] != st:
                            candidates[note] = None
                    prefix = rel + "/"
                    gone.update((p, None) for p in known if p.startswith(prefix) and not (self.vault / p).is_file())
                elif full.is_file() and not full.is_symlink() and is_searchable(full.name):
                    info = full.stat()
                    if known.get(rel, (None, None))[:2] != (info.st_mtime_ns, info.st_size):
                        candidates[rel] = None
                else:
                    prefix = rel + "/"
                    gone.update((p, None) for p in known if p == rel or p.startswith(prefix))
            stats = self._apply_or_discard(list(candidates), list(gone), known, None)
            return self.reconcile() if stats is None else self._finish(stats, started)

    def _apply_or_discard(self, candidates: list[str], gone: list[str], known: dict[str, tuple[int, int, str]],
                          progress: Progress | None) -> IndexStats | None:
        """``_apply``; None when the vector store failed and was emptied (reconcile again)."""
        try:
            return apply_changes(self, candidates, gone, known, progress)
        except (RoutineError, OSError):
            raise
        except Exception as exc:  # chromadb's own errors: the store is damaged
            if not known:
                raise  # a fresh index failed: rebuilding again would not help
            self._restart_empty(f"failed a write ({type(exc).__name__}: {exc})")
            return None

    def _relative(self, path: str | os.PathLike[str]) -> str | None:
        text = os.fspath(path)
        if os.path.isabs(text):
            try:
                text = Path(os.path.abspath(text)).relative_to(os.path.abspath(self.vault)).as_posix()
            except ValueError:
                return None
        parts = [p for p in text.replace("\\", "/").split("/") if p not in ("", ".")]
        if not parts or ".." in parts or any(p.startswith(".") for p in parts):
            return None
        return "/".join(parts)

    def _finish(self, stats: IndexStats, started: float) -> IndexStats:
        stats.notes, stats.chunks = self.opened_manifest.counts()
        stats.seconds = round(time.monotonic() - started, 3)
        stats.rebuilt, self.rebuilt = self.rebuilt, None
        return stats

    # --- searching --------------------------------------------------------------------------

    def search(self, query: str, k: int = 6, reads: list[str] | tuple[str, ...] | None = None,
               exclude: Iterable[str] = (), refresh: bool = True, progress: Progress | None = None) -> list[Hit]:
        """The best ``k`` notes for ``query`` (one hit per note), only from ``reads`` when given.

        Unless a vault watcher keeps the index current, the vault is reconciled first (a stat
        per unchanged note).
        """
        self.open()
        if refresh and not (self.follows_vault and self._level):
            self.reconcile(progress)
        reads = None if reads is None else list(reads)
        try:
            return ranked_hits(self, query, k, reads, set(exclude))
        except DamagedStore as exc:
            problem = str(exc)
        except RoutineError:
            raise
        except Exception as exc:  # chromadb's own errors on a damaged store
            problem = f"failed a search ({type(exc).__name__}: {exc})"
        with self._write:
            self._restart_empty(problem)
            self.reconcile(progress)
        return ranked_hits(self, query, k, reads, set(exclude))

    def vectors(self) -> VectorTable:
        """Every stored vector, for exact ranking: read from the store once, then kept current."""
        table = self._table
        if table is None:
            with self._write:
                if self._table is None:
                    self._table = VectorTable.of(*self.opened_store.all_vectors())
                table = self._table
        return table

    def written(self, added: VectorTable, removed: list[str]) -> None:
        """The store took ``added`` and lost ``removed``: keep the loaded table level with it."""
        if self._table is not None:
            self._table = self._table.changed(added, set(removed))

    def _drop_table(self) -> None:
        self._table = None

    def describe(self) -> health.IndexDescription:
        self.open()
        notes, chunks = self.opened_manifest.counts()
        return {"notes": notes, "chunks": chunks, "embedding_model": self.embedder.identity,
                "folder": str(self.folder)}
