"""Bringing the index level with notes on disk: plan each note, embed what is new, write it.

Each batch is written in an order that survives a kill -9 at any point: vectors are made
first (a failure changes nothing), the manifest records the chunk ids about to be written,
the vector store takes them, and only then does the manifest record the note as indexed.
A chunk whose text is already stored (a moved or copied note) reuses that vector.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from routine.errors import NoteUnreadable, SearchIndexError
from routine.jsonvalue import JSONObject
from routine.memory.chunks import Chunk, chunk_note
from routine.vault.files import NOTE_MAX_BYTES, decode_note, read_regular, skip_undecodable
from routine.vault.pdf import PDF_MAX_BYTES, is_pdf, pages_of, pdf_markdown
from routine.watch.filters import is_searchable  # the one rule: what the watcher ignores, the index does too

if TYPE_CHECKING:
    from routine.memory.embedder import TextEmbedder
    from routine.memory.manifest import Manifest
    from routine.memory.store import ChromaStore, ChunkMetadata
    from routine.memory.vectors import VectorTable

log = logging.getLogger(__name__)
_told: set[tuple[str, str]] = set()  # (note, why) already logged as not indexed

EMBED_BATCH = 32  # chunks embedded and written together (and a step of the progress bar)
RACY_NS = 2_000_000_000  # a note changed this recently is hashed again next time (same-mtime edits)

Progress = Callable[[str, int, int], None]  # (what, done, total)


class OpenIndex(Protocol):
    """What indexing uses of the open index (``routine.memory.index.VaultIndex``, which imports this)."""

    vault: Path
    chunk_chars: int
    embedder: TextEmbedder

    @property
    def opened_manifest(self) -> Manifest: ...
    @property
    def opened_store(self) -> ChromaStore: ...
    def stopping(self) -> bool: ...
    def written(self, added: VectorTable, removed: list[str]) -> None: ...


@dataclass
class IndexStats:
    notes: int = 0  # notes in the index afterwards
    chunks: int = 0  # chunks in the index afterwards
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0  # looked at (stat or hash) and found as indexed
    embedded: int = 0  # chunks embedded
    reused: int = 0  # chunks whose vector was reused (a moved or copied note)
    seconds: float = 0.0
    rebuilt: str | None = None  # why the index was rebuilt from the vault before this pass
    no_text: list[str] = field(default_factory=list)  # PDFs of this pass without a text layer (scans)
    unreadable: list[str] = field(default_factory=list)  # PDFs of this pass left out (damaged, hostile, too slow)

    def as_dict(self) -> JSONObject:
        return asdict(self)


@dataclass
class _NotePlan:
    rel: str
    mtime_ns: int
    size: int
    sha: str
    new: list[Chunk] = field(default_factory=list)  # to write (embedded or reused)
    keep: list[Chunk] = field(default_factory=list)  # stored already: metadata refreshed
    drop: list[str] = field(default_factory=list)  # ids of chunks the note no longer has
    is_new: bool = False
    scanned: bool = False  # a PDF without a text layer
    unreadable: bool = False  # a PDF not readable within its limits: recorded, not read again until it changes


def scan_vault(vault: Path, under: str = "") -> dict[str, tuple[int, int]]:
    """rel -> (mtime_ns, size) of every note: hidden folders and symlinks are left out."""
    found: dict[str, tuple[int, int]] = {}
    stack = [vault / under if under else vault]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        for entry in entries:
            rel = Path(entry.path).relative_to(vault).as_posix()
            if entry.name.startswith(".") or entry.is_symlink() or skip_undecodable(rel):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif is_searchable(entry.name) and entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                found[rel] = (st.st_mtime_ns, st.st_size)
    return found



def apply_changes(ix: OpenIndex, candidates: list[str], gone: list[str], known: dict[str, tuple[int, int, str]],
                  progress: Progress | None) -> IndexStats:
    """Index ``candidates`` (new or changed on disk) and remove ``gone``; ``ix`` is the open VaultIndex."""
    stats = IndexStats()
    total, done = len(candidates) + len(gone), 0
    if progress and total:
        progress("indexing", 0, total)
    batch: list[_NotePlan] = []
    pending = 0
    for rel in candidates:  # additions first: a moved note reuses the vectors of its old self
        _interrupted_if_stopping(ix)
        plan = _plan(ix, rel, known.get(rel))
        if plan is None:
            stats.unchanged += 1
        else:
            if plan.scanned:
                stats.no_text.append(rel)
            if plan.unreadable:
                stats.unreadable.append(rel)
            batch.append(plan)
            pending += len(plan.new)
            if plan.is_new:
                stats.added += 1
            elif plan.new or plan.drop:
                stats.changed += 1
            else:
                stats.unchanged += 1
        done += 1
        if pending >= EMBED_BATCH or len(batch) >= EMBED_BATCH:
            _write_batch(ix, batch, stats)
            batch, pending = [], 0
            if progress:
                progress("indexing", done, total)
            _interrupted_if_stopping(ix)
    _write_batch(ix, batch, stats)
    for start in range(0, len(gone), EMBED_BATCH):
        part = gone[start:start + EMBED_BATCH]
        from routine.memory.vectors import VectorTable  # lazy: numpy, only where indexing happens

        ids = [i for rel in part for i in ix.opened_manifest.chunk_ids(rel)]
        ix.opened_store.delete(ids)
        ix.written(VectorTable.empty(), ids)
        ix.opened_manifest.settle([], ids, [], forgotten=part)
        stats.removed += len(part)
    if progress and total:
        progress("indexing", total, total)
    return stats

def _interrupted_if_stopping(ix: OpenIndex) -> None:
    if ix.stopping():
        raise SearchIndexError("Indexing was interrupted; what was indexed so far is kept.",
                               "run `routine index` to finish it.")


def _plan(ix: OpenIndex, rel: str, known: tuple[int, int, str] | None) -> _NotePlan | None:
    """What changes for one note; None when it vanished meanwhile."""
    path = ix.vault / rel
    try:
        st = path.stat()
        raw = read_regular(path, PDF_MAX_BYTES if is_pdf(rel) else NOTE_MAX_BYTES, label=rel)
    except NoteUnreadable as exc:
        _tell(rel, exc.message)
        return None
    except OSError:  # gone meanwhile, or not ours to read
        return None
    sha = hashlib.sha256(raw).hexdigest()
    plan = _NotePlan(rel, st.st_mtime_ns, st.st_size, sha, is_new=known is None)
    if known is not None and known[2] == sha:
        return plan  # touched, not changed: only the stat is recorded
    text = _pdf_text(raw, rel) if is_pdf(rel) else _note_text(raw, rel)
    plan.unreadable = text is None
    plan.scanned = is_pdf(rel) and text == ""
    text = text or ""
    chunks = chunk_note(rel, text, ix.chunk_chars)
    old = ix.opened_manifest.chunk_ids(rel)
    wanted = {c.id for c in chunks}
    plan.keep = [c for c in chunks if old.get(c.id) == 1]
    plan.new = [c for c in chunks if old.get(c.id) != 1]
    plan.drop = [i for i in old if i not in wanted]
    return plan

def _note_text(raw: bytes, rel: str) -> str | None:
    """A note's text; None for a binary file named like one (said once in the log)."""
    try:
        return decode_note(raw, rel)
    except NoteUnreadable as exc:
        _tell(rel, exc.message)
        return None


def _pdf_text(raw: bytes, rel: str) -> str | None:
    """A PDF's pages as sections (`page=N`); a scan has none and is found by its name alone; None
    for one that cannot be read within its limits (said once in the log)."""
    try:
        text = pdf_markdown(pages_of(raw, rel))
    except NoteUnreadable as exc:
        _tell(rel, exc.message)
        return None
    if not text:
        _tell(rel, f"{rel} has no text layer (a scanned PDF): it is found by its name only")
    return text


def _tell(rel: str, why: str) -> None:
    if (rel, why) not in _told:  # once, not at every reconcile
        _told.add((rel, why))
        log.warning("not indexed: %s", why)


def _write_batch(ix: OpenIndex, batch: list[_NotePlan], stats: IndexStats) -> None:
    if not batch:
        return
    new = [c for plan in batch for c in plan.new]
    vectors = _vectors_for(ix, new, stats)  # before anything is written: a failure changes nothing
    ix.opened_manifest.intend([(c.id, c.path, c.sha) for c in new])
    if new:
        ix.opened_store.upsert([c.id for c in new], [vectors[c.sha] for c in new], [c.body for c in new],
                        [_metadata(c, plan.mtime_ns) for plan in batch for c in plan.new])
    keep = [(c, plan.mtime_ns) for plan in batch for c in plan.keep]
    if keep:
        ix.opened_store.update_metadata([c.id for c, _ in keep], [_metadata(c, m) for c, m in keep])
    drop = [i for plan in batch for i in plan.drop]
    ix.opened_store.delete(drop)
    from routine.memory.vectors import VectorTable  # lazy: numpy, only where indexing happens

    ix.written(VectorTable.of([c.id for c in new], [c.path for c in new], [vectors[c.sha] for c in new],
                              [c.body for c in new]), drop)
    now = time.time_ns()
    ix.opened_manifest.settle([c.id for c in new], drop,
                       [(p.rel, p.mtime_ns, p.size if now - p.mtime_ns > RACY_NS else -1, p.sha) for p in batch])


def _vectors_for(ix: OpenIndex, chunks: list[Chunk], stats: IndexStats) -> dict[str, list[float]]:
    """sha -> vector for each chunk: reused from a stored chunk of the same text, else embedded."""
    shas = list(dict.fromkeys(c.sha for c in chunks))
    donors = ix.opened_manifest.stored_ids_by_sha(shas)
    stored = ix.opened_store.vectors_of(list(donors.values()))
    vectors = {sha: stored[donors[sha]] for sha in shas if donors.get(sha) in stored}
    stats.reused += sum(1 for c in chunks if c.sha in vectors)
    todo = [sha for sha in shas if sha not in vectors]
    texts = {c.sha: c.text for c in chunks}
    for start in range(0, len(todo), EMBED_BATCH):  # one large note is many batches: a stop is heard between
        _interrupted_if_stopping(ix)
        part = todo[start:start + EMBED_BATCH]
        for sha, vector in zip(part, ix.embedder.embed([texts[sha] for sha in part])):
            vectors[sha] = vector
    stats.embedded += len(todo)
    return vectors

def _metadata(chunk: Chunk, mtime_ns: int) -> ChunkMetadata:
    meta: ChunkMetadata = {"path": chunk.path, "heading": chunk.heading or "", "ordinal": chunk.ordinal,
            "mtime": mtime_ns / 1e9, "sha": chunk.sha}
    if chunk.tags:  # chromadb takes no empty lists
        meta["tags"] = list(chunk.tags)
    if chunk.links:
        meta["links"] = list(chunk.links)
    return meta

