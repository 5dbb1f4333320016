"""One atomic writer: every file routine replaces or creates survives a power cut whole.

A rename is durable only once the folder holding it is fsynced; each writer is run here against
a real folder with ``os.fsync`` watched, and must have fsynced the written file and its folder.
"""

from __future__ import annotations

import ast
import json
import os
import stat
from pathlib import Path

import pytest

ROUTINE = Path(__file__).resolve().parent.parent / "routine"


@pytest.fixture
def fsynced(monkeypatch):
    """What ``os.fsync`` was called on: ("dir", path) or ("file", path), in order."""
    seen: list[tuple[str, str]] = []
    real = os.fsync

    def watching(fd):
        st = os.fstat(fd)
        target = os.readlink(f"/proc/self/fd/{fd}")
        seen.append(("dir" if stat.S_ISDIR(st.st_mode) else "file", target))
        return real(fd)

    monkeypatch.setattr(os, "fsync", watching)
    return seen


def _durable(seen, path: Path) -> bool:
    """The file's bytes and the folder's entry were both fsynced, the folder after the file."""
    folder = str(path.parent.resolve())
    dirs = [i for i, (kind, where) in enumerate(seen) if kind == "dir" and where == folder]
    files = [i for i, (kind, where) in enumerate(seen) if kind == "file" and Path(where).parent == Path(folder)]
    return bool(dirs and files and max(dirs) > min(files))


def test_the_metrics_textfile_is_durable(tmp_path, fsynced):
    from routine.daemon import promfile

    target = tmp_path / "routine.prom"
    assert promfile.write(target, "routine_up 1\n")
    assert _durable(fsynced, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # node_exporter reads it as another user


def test_the_index_meta_is_durable(tmp_path, fsynced):
    from routine.memory import health

    health.write_meta(tmp_path, {"format": 3})
    assert _durable(fsynced, tmp_path / health.META)
    assert health.read_meta(tmp_path) == {"format": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == [health.META]  # no temp file left


def test_a_note_replaced_or_created_is_durable(tmp_path, fsynced):
    from routine.vault import atomic_create, atomic_write

    note = tmp_path / "Daily" / "2026-03-02.md"
    atomic_create(note, "first\n")
    assert _durable(fsynced, note)
    fsynced.clear()
    atomic_write(note, "second\n", expected=b"first\n")
    assert _durable(fsynced, note)
    assert note.read_text() == "second\n"


def test_the_proposal_seal_key_is_durable(tmp_path, monkeypatch, fsynced):
    from routine.vault.guard import seal

    monkeypatch.setenv("ROUTINE_STATE_DIR", str(tmp_path / "state"))
    assert seal("Drafts/x.md", {"target": "Daily/x.md"})
    key = tmp_path / "state" / "proposal-seal.key"
    assert _durable(fsynced, key)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_a_replaced_file_keeps_its_mode_unless_told(tmp_path):
    from routine.atomicfile import replace

    target = tmp_path / "meta.json"
    target.write_text("{}")
    target.chmod(0o640)
    replace(target, json.dumps({"a": 1}))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    replace(target, "{}", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["meta.json"]


# Renames that move whole folders, not file writes; each says why it is not the file writer.
FOLDER_MOVES = {
    "memory/index.py": "the whole index folder moved aside in one step before it is deleted",
    "memory/embedder.py": "an unpacked model folder renamed into place",
    "agents/publish.py": "a published version's folder renamed into place (fails if taken)",
    "statedb.py": "a damaged state SQLite file (and its -wal, -shm) moved aside under a new name, nothing written",
}


def test_one_module_replaces_files():
    """``routine/atomicfile.py`` is the one place that renames or links a file into place."""
    calls = []
    for module in sorted(ROUTINE.rglob("*.py")):
        rel = module.relative_to(ROUTINE).as_posix()
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"
                    and node.attr in ("replace", "rename", "link", "fsync")):
                calls.append((rel, node.attr))
    stray = [(rel, attr) for rel, attr in calls if rel != "atomicfile.py" and rel not in FOLDER_MOVES]
    assert not stray, f"write files through routine.atomicfile, not os.{stray[0][1]} in {stray[0][0]}"
    assert {attr for rel, attr in calls if rel == "atomicfile.py"} >= {"replace", "link", "fsync"}


def test_two_task_pickups_finishing_together_both_land_on_the_home_note(tmp_path):
    """Two of routine's threads rewriting lines of one note at the same moment (two agents' tasks
    finished together): each change lands; neither rename drops the other's line."""
    import threading

    from routine.projects.tasks import parse_line

    home = tmp_path / "Projects" / "Acme" / "Acme.md"
    home.parent.mkdir(parents=True)
    for round_ in range(30):
        lines = [f"- [ ] Task {round_}-{i} [assignee:: [[Research]]]" for i in range(2)]
        home.write_text("# Acme\n\n## Tasks\n\n" + "\n".join(lines) + "\n")
        tasks = [parse_line("Projects/Acme/Acme.md", 4 + i, line) for i, line in enumerate(lines)]
        start = threading.Barrier(2)

        threads = [threading.Thread(target=_finish_together, args=(tmp_path, t, start)) for t in tasks]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert home.read_text().count("- [x]") == 2, (round_, home.read_text())


def _finish_together(vault, task, start) -> None:
    from routine.projects.tasks import update_task

    start.wait()
    update_task(vault, task, lambda text: text.replace("[ ]", "[x]", 1))
