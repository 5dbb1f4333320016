"""`routine index`, `routine search` and a step's `search:`, run as a person runs them.

One test uses the shipped all-MiniLM-L6-v2 (the default) to show real ranking and scopes;
the others use the Ollama stand-in's /api/embed, since they test the index, not the model.
"""

from __future__ import annotations

import json
import os
import pty
import random
import re
import signal
import subprocess
import sys
import textwrap

import pytest

from test_daemon import daemon, wait_for
from waits import scaled

pytestmark = pytest.mark.real_embeddings  # search is under test: its daemons embed with the shipped MiniLM

AGENTS = {
    "Agents/Projector.md": """\
        ---
        agent: projector
        model: general
        reads: ["Projects/**"]
        writes: ["Daily/**"]
        ---
        You look after projects.
        """,
    "Agents/Keeper.md": """\
        ---
        agent: keeper
        model: general
        reads: ["Private/**"]
        writes: ["Daily/**"]
        ---
        You keep the diary.
        """,
}
NOTES = {
    "Private/Diary.md": "# Diary\n\nThe battery supplier missed the March deadline again and I am worried about it.\n",
    "Projects/Van/Plan.md": "# Plan\n\n## Parts\nOrder the battery from the supplier for spring.\n",
    "Projects/Shed.md": "# Shed\n\nBuild a garden shed from larch wood.\n",
}
SCHEDULE = """\
    blocks:
      supplier-check:
        cron: "0 9 * * *"
        steps:
          - agent: projector
            task: What is the state of the battery supplier and its deadline?
            search: {query: "{{ task }}", k: 3}
            write: {note: "Daily/{{ today }}.md", section: "Supplier"}
    """
FAKE_EMBEDDINGS = "\nmemory: {embedding_model: 'ollama:nomic-embed-text'}\n"


def put(home, rel, text):
    path = home.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def team(initialised):
    for rel, text in {**AGENTS, **NOTES}.items():
        put(initialised, rel, text)
    (initialised.config.parent / "schedules" / "check.yaml").write_text(textwrap.dedent(SCHEDULE))
    return initialised


def search(home, *args) -> list[dict]:
    return json.loads(home.run("search", *args, "--json", check=True).stdout)


def dry_run_steps(home, target) -> list[dict]:
    out = home.run("fire", target, "--dry-run", "--json", check=True).stdout
    decoder, steps, pos = json.JSONDecoder(), [], 0
    while pos < len(out.strip()):
        step, end = decoder.raw_decode(out, pos)
        steps.append(step)
        pos = end + 1
    return steps


def test_retrieval_respects_scopes_with_the_shipped_minilm(team):
    """The diary matches best; an agent that may not read Private/ never sees it."""
    query = "battery supplier missed the deadline"
    everyone = search(team, query, "-k", "3")
    assert everyone[0]["path"] == "Private/Diary.md"  # the default model ranks by meaning
    projector = search(team, query, "--agent", "projector", "-k", "3")
    assert [h["path"] for h in projector][:1] == ["Projects/Van/Plan.md"]
    assert projector[0]["link"] == "[[Projects/Van/Plan#Parts]]" and "battery" in projector[0]["snippet"]
    assert all(h["path"].startswith("Projects/") for h in projector)
    assert [h["path"] for h in search(team, query, "--agent", "keeper")] == ["Private/Diary.md"]

    (step,) = dry_run_steps(team, "supplier-check")
    assert "Projects/Van/Plan.md" in step["sources"] and "Private/Diary.md" not in step["sources"]
    prompt = "\n".join(m["content"] for m in step["messages"])
    assert "[[Projects/Van/Plan#Parts]] (found by search)" in prompt
    assert "March deadline" not in prompt

    plain = team.run("search", query, "--agent", "projector", check=True).stdout
    assert plain.startswith("1. [[Projects/Van/Plan#Parts]]") and "Diary" not in plain


def test_fire_brings_the_index_up_to_date_before_a_search(team):
    team.config.write_text(team.config.read_text() + FAKE_EMBEDDINGS)
    (first,) = dry_run_steps(team, "supplier-check")
    assert {"Projects/Van/Plan.md", "Projects/Shed.md"} <= set(first["sources"])
    put(team, "Projects/Kiln.md", "# Kiln\n\nA kiln for the garden.\n")
    (team.vault / "Projects/Shed.md").unlink()
    (second,) = dry_run_steps(team, "supplier-check")
    assert "Projects/Kiln.md" in second["sources"] and "Projects/Shed.md" not in second["sources"]
    fired = team.run("fire", "supplier-check", "--json", check=True)
    assert json.loads(fired.stdout)["status"] == "ok"
    index = json.loads(team.run("index", "--json", check=True).stdout)
    assert (index["added"], index["changed"], index["removed"], index["embedded"]) == (1, 0, 0, 1)  # today's note


def generated_vault(home, n: int) -> None:
    rng = random.Random(7)
    words = "battery supplier garden shed kiln plan review deadline budget wood paint order call email".split()
    for i in range(n):
        folder = ("Projects", "Daily", "Research", "Private")[i % 4]
        body = " ".join(rng.choice(words) for _ in range(40))
        put(home, f"{folder}/Note {i:04d}.md",
            f"# Note {i}\n\nIntro {i}: {body}\n\n## Details\n{body[::-1]}\n\n## Links\nSee [[Note {i + 1:04d}]].\n")


def exact_queries(home) -> dict[str, str]:
    """Queries that one chunk answers best (its own embedded text), by the note they come from."""
    from routine.memory.chunks import chunk_note

    picks = ["Projects/Note 0004.md", "Daily/Note 0101.md", "Research/Note 0302.md", "Private/Note 0399.md"]
    return {rel: chunk_note(rel, (home.vault / rel).read_text(), 1000)[1].text for rel in picks}


def top_hits(home, env=None) -> dict[str, tuple]:
    out = {}
    for rel, query in exact_queries(home).items():
        proc = subprocess.run([sys.executable, "-m", "routine", "search", query, "-k", "3", "--json"],
                              env=env or home.env, capture_output=True, text=True, timeout=scaled(300))
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        hit = json.loads(proc.stdout)[0]
        out[rel] = (hit["path"], hit["heading"], round(hit["score"], 4))
    return out


def index_contents(state) -> list[tuple]:
    """Every chunk in the vector store: id, metadata, text and vector (rounded)."""
    from routine.memory.store import ChromaStore

    store = ChromaStore(state / "index" / "chroma")
    try:
        got = store.collection.get(include=["metadatas", "documents", "embeddings"])
        return sorted((i, json.dumps(m, sort_keys=True), d, tuple(round(float(x), 5) for x in v))
                      for i, m, d, v in zip(got["ids"], got["metadatas"], got["documents"], got["embeddings"]))
    finally:
        store.close()


def kill_mid_indexing(home, tenths_before_kill: int) -> str:
    """`routine index` on a terminal (its bar, read from a pseudo-terminal), killed once it has done
    more than ``tenths_before_kill`` tenths of the pass."""
    ours, theirs = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "routine", "index"], env={**home.env, "COLUMNS": "200"},
                            cwd=home.root, stdout=subprocess.PIPE, stderr=theirs)
    os.close(theirs)
    seen = ""
    try:
        while proc.poll() is None:
            seen += os.read(ours, 4096).decode(errors="replace")
            done = [(int(d), int(t)) for d, t in re.findall(r"\] (\d+)/(\d+) notes", seen)]
            if any(d * 10 > t * tenths_before_kill for d, t in done):
                break
    except OSError:  # the pass ended and closed the terminal
        pass
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(scaled(30))
        os.close(ours)
    assert proc.returncode == -signal.SIGKILL, seen  # killed mid-way, not finished
    return seen


def test_kill_9_during_indexing_then_search_matches_a_fresh_index(initialised):
    home = initialised
    home.config.write_text(home.config.read_text() + FAKE_EMBEDDINGS)
    generated_vault(home, 1000)
    kill_mid_indexing(home, 1)
    kill_mid_indexing(home, 2)  # the resumed pass, killed again
    recovered = top_hits(home)  # a search after the crash: it checks, repairs and finishes the index
    assert {rel: hit[0] for rel, hit in recovered.items()} == {rel: rel for rel in recovered}
    again = json.loads(home.run("index", "--json", check=True).stdout)
    assert (again["added"], again["changed"], again["removed"], again["embedded"]) == (0, 0, 0, 0)

    fresh_env = {**home.env, "ROUTINE_STATE_DIR": str(home.root / "fresh-state")}
    fresh = json.loads(subprocess.run([sys.executable, "-m", "routine", "index", "--json"], env=fresh_env,
                                      capture_output=True, text=True, timeout=scaled(600), check=True).stdout)
    assert (again["notes"], again["chunks"]) == (fresh["notes"], fresh["chunks"])
    assert top_hits(home, fresh_env) == recovered
    assert index_contents(home.state) == index_contents(home.root / "fresh-state")


def damage_truncated_segment_after_a_crash(state):
    segments = [p for p in (state / "index" / "chroma").rglob("*.bin")]
    assert segments, "the vector store wrote no segment files"
    for path in segments:
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 3)
    (state / "index" / "open-by").write_text("12345\n")  # what a kill -9 leaves


def damage_garbage_in_the_database(state):
    db = state / "index" / "chroma" / "chroma.sqlite3"
    size = db.stat().st_size
    with open(db, "r+b") as f:
        for offset in range(4096, size, 8192):
            f.seek(offset)
            f.write(os.urandom(2048))


@pytest.mark.parametrize("damage", [damage_truncated_segment_after_a_crash, damage_garbage_in_the_database])
def test_a_damaged_index_is_rebuilt_from_the_vault(initialised, damage):
    home = initialised
    home.config.write_text(home.config.read_text() + FAKE_EMBEDDINGS)
    generated_vault(home, 400)
    home.run("index", check=True)
    before = index_contents(home.state)
    damage(home.state)
    proc = home.run("search", "battery supplier deadline", "-k", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "rebuilding it from the vault" in proc.stderr and "Traceback" not in proc.stderr
    assert len(json.loads(proc.stdout)) == 5
    assert index_contents(home.state) == before
    assert {rel: hit[0] for rel, hit in top_hits(home).items()} == {rel: rel for rel in exact_queries(home)}


def test_with_the_daemon_running_index_and_search_go_through_it(team):
    team.config.write_text(team.config.read_text() + FAKE_EMBEDDINGS)
    with daemon(team):
        stats = json.loads(team.run("index", "--json", check=True, timeout=60).stdout)
        assert stats["notes"] >= len(NOTES)
        put(team, "Private/Secret.md", "# Secret\n\nThe supplier code is 1234.\n")
        # The daemon's index follows the vault watcher: the new note is in it a moment after the save.
        wait_for(lambda: "Private/Secret.md" in [h["path"] for h in search(team, "supplier code", "--agent", "keeper")],
                 20, "the daemon's index to follow the new note")
        hits = search(team, "supplier code", "--agent", "projector", "-k", "10")
        assert hits and all(h["path"].startswith("Projects/") for h in hits)
        (step,) = dry_run_steps(team, "supplier-check")  # the daemon holds the index; a dry run asks it
        assert "Private/Secret.md" not in step["sources"] and "Projects/Van/Plan.md" in step["sources"]
        fired = json.loads(team.run("fire", "supplier-check", "--json", check=True, timeout=120).stdout)
        assert fired["status"] == "ok"
    log = (team.root / "daemon.log").read_text()
    assert "Traceback" not in log


def test_memory_settings_are_checked_like_every_other_key(initialised):
    home = initialised
    home.config.write_text(home.config.read_text() + "\nmemory:\n  embedding_model: ./models/mine\n  unload_afte: 60\n")
    proc = home.run("index")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "routine.yaml" in proc.stderr and "unload_afte" in proc.stderr
    home.config.write_text(home.config.read_text().replace("unload_afte", "unload_after"))
    proc = home.run("search", "anything")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"no sentence-transformers model in {home.config.parent / 'models' / 'mine'}" in proc.stderr
    assert "memory.embedding_model" in proc.stderr  # the fix names the key


def test_search_usage_errors_exit_2(initialised):
    proc = initialised.run("search", "x", "-k", "0")
    assert proc.returncode == 2 and "-k must be 1 or more" in proc.stderr


def test_progress_is_a_bar_on_a_terminal_and_silent_when_piped(initialised):
    import io

    from routine.terminal.progress import ProgressPrinter

    plain = io.StringIO()
    printer = ProgressPrinter(plain, tty=False)
    for done in range(0, 1001):
        printer("indexing", done, 1000)
    assert plain.getvalue() == ""  # the README: piped, progress stays silent
    home = initialised
    home.config.write_text(home.config.read_text() + FAKE_EMBEDDINGS)
    piped = subprocess.run([sys.executable, "-m", "routine", "index"], env=home.env, cwd=home.root,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=scaled(300))
    assert piped.returncode == 0 and "indexing" not in piped.stdout, piped.stdout  # `routine index 2>&1 | cat`

    bar, now = io.StringIO(), [100.0]
    printer = ProgressPrinter(bar, tty=True, clock=lambda: now[0])
    printer("indexing", 0, 10)
    now[0] += 2.5
    printer("indexing", 5, 10)
    last = bar.getvalue().split("\r\x1b[K")[-1]
    assert last == "indexing [###############...............] 5/10 notes, 2.0 notes/s, 2 s left"  # rate and ETA
    quiet = io.StringIO()
    ProgressPrinter(quiet, tty=True, quiet=True)("indexing", 5, 10)  # `routine index --quiet`
    assert quiet.getvalue() == ""
