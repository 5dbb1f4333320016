"""The search index in process: incremental passes, watch events, scopes, crash leftovers.

Real chromadb, SQLite and files; vectors come from the Ollama stand-in's /api/embed (a
deterministic vector per text), because what is tested here is the bookkeeping, not the
model: a query equal to a chunk's embedded text finds that chunk first.
"""

from __future__ import annotations

import os
import shutil

import pytest

from routine.config.loader import load_config
from routine.memory import VaultIndex
from routine.memory.chunks import chunk_note
from waits import wait_until

NOTES = {
    "Projects/Alpha.md": "# Alpha\n\n## Risks\nThe battery supplier may slip.\n\n## Budget\nTen thousand left.\n",
    "Projects/Beta.md": "# Beta\n\nA garden shed, built in spring.\n",
    "Private/Diary.md": "# Diary\n\nI worry about the battery supplier.\n",
    "Daily/2026-11-20.md": "## Log\nCalled Ana about the shed.\n\n## Plan\n- [ ] order wood\n",
}


@pytest.fixture
def setup(tmp_path, ollama):
    vault = tmp_path / "Vault"
    for rel, text in NOTES.items():
        write(vault, rel, text)
    cfg = tmp_path / "routine.yaml"
    cfg.write_text(f"vault: {vault}\nollama: {{host: '{ollama.url}'}}\n"
                   "models: {general: ollama_chat/mistral:7b-instruct-q4_K_M}\n"
                   "memory: {embedding_model: 'ollama:nomic-embed-text'}\n")
    return load_config(cfg), tmp_path / "state", vault, ollama


def write(vault, rel, text):
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def embedded_texts(ollama) -> int:
    return sum(len(r["input"]) for r in ollama.requests if r["_path"] == "/api/embed")


def query_for(rel, text, heading=None) -> str:
    """A query that the chunk's own vector answers best (its embedded text)."""
    return next(c.text for c in chunk_note(rel, text, 1000) if heading is None or c.heading == heading)


def paths(hits):
    return [h.path for h in hits]


def test_an_unchanged_vault_costs_no_embedding_and_loads_no_model(setup):
    config, state, vault, ollama = setup
    with VaultIndex(config, state) as index:
        first = index.reconcile()
    assert (first.added, first.notes) == (4, 4) and first.embedded == first.chunks == 6
    sent = embedded_texts(ollama)
    with VaultIndex(config, state) as index:
        again = index.reconcile()
        assert not index.embedder.loaded
    assert (again.added, again.changed, again.removed, again.embedded, again.unchanged) == (0, 0, 0, 0, 4)
    assert embedded_texts(ollama) == sent


def test_a_changed_note_embeds_only_its_changed_chunk(setup):
    config, state, vault, ollama = setup
    with VaultIndex(config, state) as index:
        index.reconcile()
        new_text = NOTES["Projects/Alpha.md"].replace("Ten thousand", "Nine thousand")
        write(vault, "Projects/Alpha.md", new_text)
        stats = index.reconcile()
        assert (stats.changed, stats.embedded, stats.chunks) == (1, 1, 6)
        top = index.search(query_for("Projects/Alpha.md", new_text, "Budget"), k=1)[0]
        assert (top.link, top.text) == ("[[Projects/Alpha#Budget]]", "Nine thousand left.")
        assert top.score > 0.999


def test_deleted_notes_leave_the_index_and_moved_ones_keep_their_vectors(setup):
    config, state, vault, ollama = setup
    with VaultIndex(config, state) as index:
        index.reconcile()
        (vault / "Private/Diary.md").unlink()
        shutil.move(vault / "Projects", vault / "Archive")
        stats = index.reconcile()
        assert (stats.added, stats.removed, stats.embedded, stats.reused) == (2, 3, 0, 3)
        everything = index.search("battery supplier shed wood", k=10)
        assert sorted(paths(everything)) == ["Archive/Alpha.md", "Archive/Beta.md", "Daily/2026-11-20.md"]


def test_watch_events_update_the_index_without_a_full_pass(setup):
    config, state, vault, ollama = setup
    with VaultIndex(config, state) as index:
        index.reconcile()
        write(vault, "Inbox/Idea.md", "A kiln for the garden.\n")
        os.rename(vault / "Projects/Beta.md", vault / "Projects/Shed.md")
        (vault / "Daily/2026-11-20.md").unlink()
        shutil.rmtree(vault / "Private")
        write(vault, ".obsidian/workspace.md", "not a note of the person's")
        stats = index.update_paths([vault / "Inbox/Idea.md", "Projects/Beta.md", "Projects/Shed.md",
                                    "Daily/2026-11-20.md", "Private", ".obsidian/workspace.md", "/elsewhere/x.md"])
        assert (stats.added, stats.removed, stats.notes) == (2, 3, 3)
        hits = index.search(query_for("Inbox/Idea.md", "A kiln for the garden.\n"), k=10)
        assert paths(hits)[0] == "Inbox/Idea.md"
        assert sorted(paths(hits)) == ["Inbox/Idea.md", "Projects/Alpha.md", "Projects/Shed.md"]
        # The watcher's word is checked against the disk: a path that did not change costs nothing.
        assert index.update_paths(["Projects/Alpha.md"]).embedded == 0


def test_no_note_outside_the_reads_scopes_is_ever_returned(setup):
    """Every chunk's own text as the query, for agents with different scopes: nothing leaks."""
    config, state, vault, ollama = setup
    for i in range(30):
        folder = ("Projects/Deep", "Private", "Daily", "Plans")[i % 4]
        write(vault, f"{folder}/Note {i}.md", f"# Note {i}\n\n## Part\nText {i} about the battery.\n")
    os.symlink(vault / "Private/Diary.md", vault / "Projects/Diary link.md")  # a link into Private
    scopes = [["Projects/**"], ["Daily/*.md", "Plans/**"], ["Private/Note 1*.md"], []]
    with VaultIndex(config, state) as index:
        index.reconcile()
        queries = [
            query_for(rel, (vault / rel).read_text())
            for rel in sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if not p.is_symlink())
        ]
        for reads in scopes:
            for query in queries:
                hits = index.search(query, k=5, reads=reads, refresh=False)
                assert all(any(_match(g, h.path) for g in reads) for h in hits), (reads, paths(hits))
        only_private = index.search(query_for("Private/Diary.md", NOTES["Private/Diary.md"]), k=5,
                                    reads=["Projects/**"], refresh=False)
        assert "Private/Diary.md" not in paths(only_private) and "Projects/Diary link.md" not in paths(only_private)
        # The filter comes before the cut: in-scope notes fill all k places.
        assert len(index.search("battery", k=5, reads=["Daily/*.md", "Plans/**"], refresh=False)) == 5


def _match(glob, rel):
    from routine.vault import glob_match

    return glob_match(glob, rel)


def test_hits_are_one_per_note_and_skip_notes_already_in_context(setup):
    config, state, vault, ollama = setup
    with VaultIndex(config, state) as index:
        index.reconcile()
        hits = index.search("anything", k=10)
        assert len(paths(hits)) == len(set(paths(hits))) == 4
        assert "Projects/Beta.md" not in paths(index.search("anything", k=10, exclude={"Projects/Beta.md"}))


def test_leftovers_of_a_killed_writer_are_repaired_on_open(setup):
    """Vectors written but not recorded, and recorded but lost: the next open makes them agree."""
    config, state, vault, ollama = setup
    with VaultIndex(config, state) as index:
        index.reconcile()
        reference = [(h.path, h.heading) for h in index.search("battery", k=4)]
        store = index.store
        lost = store.collection.get(where={"path": "Projects/Beta.md"}, include=[])["ids"]
        store.delete(lost)
        store.upsert(["stray"], [[0.1] * 384], ["old text"], [{"path": "Projects/Gone.md", "heading": ""}])
        index.store.close()
        index.store = None
        index.manifest.close()
        index.manifest = None  # dies without closing cleanly: the open-by marker stays
        index._lock_file.close()
        index._lock_file = None
    assert (state / "index" / "open-by").exists()
    with VaultIndex(config, state) as index:
        stats = index.reconcile()
        assert (stats.added, stats.embedded, stats.chunks) == (1, 1, 6)
        assert index.store.count() == 6  # the stray vector is gone, the lost ones are back
        assert [(h.path, h.heading) for h in index.search("battery", k=4)] == reference
        assert "Projects/Gone.md" not in paths(index.search("old text", k=10))


def test_another_embedding_model_means_a_rebuild(setup, tmp_path):
    config, state, vault, ollama = setup
    with VaultIndex(config, state) as index:
        index.reconcile()
    cfg = tmp_path / "routine.yaml"
    cfg.write_text(cfg.read_text().replace("ollama:nomic-embed-text", "ollama:llama3.2:3b"))
    with VaultIndex(load_config(cfg), state) as index:
        stats = index.reconcile()
    assert "embedder" in stats.rebuilt and stats.embedded == 6


def test_the_embedding_model_is_released_when_idle(setup, tmp_path):
    config, state, vault, ollama = setup
    cfg = tmp_path / "routine.yaml"
    cfg.write_text(cfg.read_text().replace("memory: {", "memory: {unload_after: 0.2, "))
    with VaultIndex(load_config(cfg), state) as index:
        index.reconcile()
        wait_until(lambda: not index.embedder.loaded, 10, "the model to be released", interval=0.05)
        assert index.search("battery", k=1)  # and loaded again when needed


def test_the_hashing_stand_in_replaces_only_the_shipped_model_and_only_when_asked(monkeypatch, tmp_path):
    """ROUTINE_TEST_EMBEDDER=hashing (daemon tests where search is not under test): no torch, and an
    index built with it is never mixed with MiniLM vectors (another identity means a rebuild)."""
    from types import SimpleNamespace

    from routine.memory.embedder import HashingEmbedder, OnnxEmbedder, SentenceTransformerEmbedder, make_embedder

    def made(spec):
        return make_embedder(SimpleNamespace(memory=SimpleNamespace(embedding_model=spec, unload_after=60.0)), tmp_path)

    monkeypatch.delenv("ROUTINE_TEST_EMBEDDER", raising=False)
    assert isinstance(made("all-MiniLM-L6-v2"), OnnxEmbedder)  # the shipped model runs under onnxruntime
    monkeypatch.setenv("ROUTINE_TEST_EMBEDDER", "hashing")
    stand_in = made("all-MiniLM-L6-v2")
    assert isinstance(stand_in, HashingEmbedder) and stand_in.identity != made("/models/mine").identity
    assert isinstance(made("/models/mine"), SentenceTransformerEmbedder)  # a model the person named stays itself
    kiln, again, other = stand_in.embed(["the kiln controller", "the kiln controller", "a garden shed"])
    assert kiln == again and len(kiln) == 384 and abs(sum(v * v for v in kiln) - 1) < 1e-9
    assert sum(a * b for a, b in zip(kiln, stand_in.embed(["kiln"])[0])) > sum(a * b for a, b in zip(kiln, other))


def test_loading_the_shipped_model_prints_no_progress_bar(tmp_path):
    """`ask` with no daemon loads the model in the person's terminal: no `Loading weights: 100%|███…`,
    even when transformers was imported before routine set the environment that silences it."""
    import subprocess
    import sys

    from waits import scaled

    script = ("import transformers\nfrom pathlib import Path\n"
              "from routine.memory.embedder import SentenceTransformerEmbedder\n"
              f"e = SentenceTransformerEmbedder('all-minilm-l6-v2', Path({str(tmp_path)!r}), 60)\n"
              "print(len(e.embed(['hello'])[0]))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS",
                                                           "TRANSFORMERS_VERBOSITY")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=scaled(300))
    assert done.stdout.strip() == "384", done.stderr
    assert "Loading weights" not in done.stderr and "%|" not in done.stderr, done.stderr
