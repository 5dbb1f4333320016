"""A tool-using step packed to its window still has room for the tool loop: its first request
leaves the agent's `tool_reserve` free, and the loop cuts or drops what it added itself before
a request could ever go over. Counted with Mistral's own tokenizer (mistral-common)."""

from __future__ import annotations

import json

import pytest

from chat_tokens import mistral_count
from fake_ollama import FakeOllama, mistral_tokenizer

MISTRAL = "mistral:7b-instruct-q4_K_M"
LIMIT = 8192 - 1024  # the shipped `general` alias: num_ctx less num_predict


@pytest.fixture
def ollama():
    counter = mistral_tokenizer()
    if counter is None:
        pytest.skip("mistral-common is not installed")
    server = FakeOllama(max_loaded=3, load_delay=0, tokenizer=counter).start()
    try:
        yield server
    finally:
        server.stop()


def _packed_vault(home, reserve: int | None) -> None:
    """An Inbox far larger than the window, and a hundred notes for list_notes to name."""
    inbox = home.vault / "Inbox"
    for i in range(12):
        sections = "\n\n".join(f"## Part {j}\n" + f"Supplier {i} quoted {j * 110} EUR for valve batch {j}. " * 30
                               for j in range(4))
        (inbox / f"Capture {i:02d} about the supplier portal and the valves.md").write_text(
            f"# Capture {i}\n\n{sections}\n"
        )
    for i in range(100):
        folder = home.vault / "Research" / f"Topic {i // 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"A research note with a long descriptive title number {i:03d}.md").write_text(f"# Note {i}\n")
    librarian = home.vault / "Agents" / "Librarian.md"
    if reserve is not None:
        text = librarian.read_text()
        librarian.write_text(text.replace("approval: none\n", f"approval: none\ntool_reserve: {reserve}\n", 1))


@pytest.mark.parametrize("reserve", [None, 256], ids=["default-reserve", "least-reserve"])
def test_a_packed_librarian_that_lists_the_vault_still_writes_its_section(initialised, ollama, reserve):
    home = initialised
    _packed_vault(home, reserve)
    ollama.script(MISTRAL, [{"tool_calls": [{"name": "list_notes", "arguments": {"folder": "", "limit": 100}}]},
                            "Filed: [[Inbox/Capture 00 about the supplier portal and the valves]] → Projects/."])
    proc = home.run("fire", "librarian")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Filed:" in next((home.vault / "Daily").glob("*.md")).read_text()
    chats = [r for r in ollama.requests if r["_path"] == "/api/chat"]
    assert len(chats) == 2
    counts = [mistral_count(r["messages"], r.get("tools")) for r in chats]
    assert all(c <= LIMIT for c in counts), counts  # every request within the window, by the real tokenizer
    assert not ollama.truncated
    if reserve is None:  # the first request left the default reserve free, and was packed up to it
        assert LIMIT - 1024 - 300 < counts[0] <= LIMIT - 1024, counts
    run_id = json.loads(home.run("runs", "list", "--json", check=True).stdout)[0]["id"]
    log = json.loads(home.run("runs", "show", run_id, "--json", check=True).stdout)["log"]
    listed = chats[1]["messages"][-1]["content"]
    assert "A research note with a long descriptive title" in listed  # the model got (part of) what it asked for
    if reserve == 256:  # little room planned: the result is cut to the room left, and the transcript says so
        assert "left out for length" in listed
        assert any(e["type"] == "elided" and "cut to the" in e["reason"] for e in log)
