"""Issue 46's smaller doors, each with the lock the project already had: a verdict quoted in an
indented code block is no verdict; a binary file named `.md` is neither read as text nor given to a
model; a lower-case token used as a notify host is hidden; `pause --until 0m` says why nothing was
paused."""

from __future__ import annotations

import os
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from routine.errors import NoteUnreadable
from routine.redact import redact_text, redact_url
from routine.vault import read_note
from routine.vault.files import read_text
from routine.verdicts import verdict_of

# A PNG's first bytes, then random ones: what a phone's sync leaves as "Photo.md".
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(4000)


def test_a_verdict_in_an_indented_code_block_is_a_quote_not_a_verdict():
    quoted = "My review of the draft.\n\nIt pasted the old checklist:\n\n    VERDICT: ok\n    all good\n\nDone."
    assert verdict_of(quoted) is None
    assert verdict_of("VERDICT: fail, the numbers are off\n\n    VERDICT: ok\n") == "fail"
    assert verdict_of("\tVERDICT: ok\n") is None  # a tab is four columns
    # not code: a list item's own paragraph, and a line that continues a paragraph
    assert verdict_of("- the figures\n\n    VERDICT: ok\n") == "ok"
    assert verdict_of("Overall\n    VERDICT: ok\n") == "ok"


def test_a_binary_file_named_md_is_not_read_as_text(tmp_path):
    (tmp_path / "Photo.md").write_bytes(BINARY)
    with pytest.raises(NoteUnreadable, match=r"Photo.md is left out: it holds NUL bytes: a binary file, not text"):
        read_note(tmp_path, "Photo.md")
    with pytest.raises(OSError):  # the readers that skip an unreadable note skip it
        read_text(tmp_path / "Photo.md")
    latin = "Caf\xe9 au lait, r\xe9sum\xe9 of the week.\n".encode("latin-1")
    (tmp_path / "Old.md").write_bytes(latin)  # a stray Latin-1 byte is still a note's text
    assert "au lait" in read_note(tmp_path, "Old.md").body


def test_a_binary_note_among_a_steps_inputs_is_named_missing_and_never_given(initialised):
    home = initialised
    today = datetime.now(ZoneInfo("Europe/Berlin")).date()
    home.config.write_text(home.config.read_text() + "\ntimezone: Europe/Berlin\n")
    daily = home.vault / "Daily" / f"{today}.md"
    daily.parent.mkdir(exist_ok=True)
    daily.write_bytes(b"# Today\n\x00" + BINARY)
    shown = home.run("fire", "next-day-setup", "--dry-run", check=True).stdout
    assert f"Daily/{today}.md is left out: it holds NUL bytes" in shown, shown
    assert "IHDR" not in shown


@pytest.mark.parametrize("url", ["pbul://o3kfh3kd8s7d6f5g4h3j2k", "gotify://abcdefghijklmnopqrstuvwx/",
                                 "json://a1b2c3d4e5f6@/x", "pover://k2j4h5g6f7d8s9a1"])
def test_a_lower_case_token_used_as_a_host_is_hidden(url):
    token = url.split("://")[1].split("/")[0].split("@")[0]
    assert token not in redact_url(url) and token not in redact_text(f"sending to {url} failed")


@pytest.mark.parametrize("url, shown", [("json://ntfy.lan:8080/topic", "json://ntfy.lan:8080"),
                                        ("slack://hooks.slack.com/T/B/C", "slack://hooks.slack.com"),
                                        ("ntfy://server1234/x", "ntfy://server1234"),
                                        ("mailto://192.168.1.20", "mailto://192.168.1.20"),
                                        ("json://nas-01.lan/x", "json://nas-01.lan")])
def test_a_host_that_reads_as_a_name_is_still_shown(url, shown):
    assert redact_url(url) == shown


def test_pause_until_zero_minutes_says_why_nothing_was_paused(initialised):
    home = initialised
    done = home.run("pause", "--until", "0m")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--until 0m would end the pause as it begins, so nothing was paused" in done.stderr, done.stderr
    assert "routine resume" in done.stderr
    assert not (home.state / "pause.json").exists()


def test_a_sentence_ending_in_a_url_keeps_its_host_and_its_full_stop():
    """An error that ends on its server's URL ("… at http://127.0.0.1:11434.") keeps the host, the
    port and the full stop before its fix; a secret in a URL is still hidden."""
    from routine.redact import redact_text

    said = "The model ghost:7b is not pulled on the Ollama at http://127.0.0.1:11566. Fix: run `ollama pull`."
    assert redact_text(said) == said
    assert redact_text("(see https://user:pw@hooks.example.org/x?token=abc), then") == \
        "(see https://hooks.example.org), then"
