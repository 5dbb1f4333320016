"""The dashboard's live block: only the text between routine's markers changes, and only when
it differs; the person's text around it survives byte for byte."""

from __future__ import annotations

from routine.vault import update_live_block

NOTE = "Routine/Dashboard.md"


def test_live_block_is_added_replaced_and_left_alone(tmp_path):
    vault = tmp_path
    path = vault / NOTE
    path.parent.mkdir(parents=True)
    person = "# My dashboard\r\n\r\nMy notes about my week.\r\n"  # CRLF, as a Windows sync left it
    path.write_bytes(person.encode())

    assert update_live_block(vault, NOTE, "dashboard", "first state", "Dashboard") == "replaced"
    text = path.read_bytes().decode()
    assert text.startswith(person) and "first state" in text and "\r\n" in text.split("first state")[1]

    stamp = path.stat().st_mtime_ns
    assert update_live_block(vault, NOTE, "dashboard", "first state", "Dashboard") == "unchanged"
    assert path.stat().st_mtime_ns == stamp  # no rewrite: nothing for a sync tool to pick up

    path.write_bytes(path.read_bytes() + b"Added below by the person.\r\n")
    assert update_live_block(vault, NOTE, "dashboard", "second state", "Dashboard") == "replaced"
    text = path.read_bytes().decode()
    assert text.startswith(person) and text.endswith("Added below by the person.\r\n")
    assert "second state" in text and "first state" not in text and text.count("routine-live:begin") == 1


def test_markers_shown_as_code_are_not_the_block(tmp_path):
    path = tmp_path / NOTE
    path.parent.mkdir(parents=True)
    example = ("```\n%% routine-live:begin dashboard (kept current by routine; edits inside are replaced) %%\n"
               "an example\n%% routine-live:end dashboard %%\n```\n")
    path.write_text(example)
    assert update_live_block(tmp_path, NOTE, "dashboard", "live", "Dashboard") == "replaced"
    assert path.read_text().startswith(example) and "an example" in path.read_text()


def test_a_missing_note_is_created_with_a_title(tmp_path):
    assert update_live_block(tmp_path, NOTE, "dashboard", "live", "Dashboard") == "created"
    assert (tmp_path / NOTE).read_text().startswith("# Dashboard\n\n%% routine-live:begin dashboard")
