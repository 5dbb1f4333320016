"""Alert notes: failures of one cause share one note that counts them and resolves itself."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from routine.person.alerts import open_causes, raise_alert, resolve_alerts
from routine.vault import split_frontmatter

T0 = datetime(2026, 11, 22, 7, 30, tzinfo=timezone.utc)


@pytest.fixture
def config(initialised):
    from routine.config.loader import load_config

    return load_config(str(initialised.config))


def props(config, rel):
    return split_frontmatter((config.vault / rel).read_text())[0]


def test_failures_of_one_cause_share_one_note_that_counts_them(config):
    rels = [raise_alert(config, T0 + timedelta(minutes=i), "Ollama unreachable at http://h:11434",
                        "Ollama is not reachable.", "start it.", run_id=f"run{i}", agent="librarian",
                        cause="ollama:http://h:11434", affected=f"block-{i % 2} (librarian)") for i in range(5)]
    assert len(set(rels)) == 1 and len(list((config.vault / "Alerts").glob("*.md"))) == 1
    p = props(config, rels[0])
    assert p["count"] == 5 and p["status"] == "open" and p["cause"] == "ollama:http://h:11434"
    assert p["last_seen"] == (T0 + timedelta(minutes=4)).isoformat(timespec="seconds")
    assert p["affected"] == ["block-0 (librarian)", "block-1 (librarian)"] and p["run"] == "run4"
    text = (config.vault / rels[0]).read_text()
    assert text.count("**Seen ") == 1 and "**Seen 5 times** since 2026-11-22 07:30" in text
    assert "\n\n\n" not in text
    assert "routine runs show run4" in text
    # Another cause gets its own note.
    other = raise_alert(config, T0, "vault not writable", "Read-only.", cause="vault-unwritable")
    assert other != rels[0] and sorted(open_causes(config)) == ["ollama:http://h:11434", "vault-unwritable"]


def test_the_note_resolves_itself_and_the_next_occurrence_opens_a_new_one(config):
    rel = raise_alert(config, T0, "Ollama unreachable at X", "down", cause="ollama:X")
    assert resolve_alerts(config, T0 + timedelta(hours=1), "ollama:X", "the check passed at 08:30.") == [rel]
    p = props(config, rel)
    assert p["status"] == "resolved" and "**Resolved by itself**" in (config.vault / rel).read_text()
    assert resolve_alerts(config, T0 + timedelta(hours=2), "ollama:X", "again") == []  # already resolved
    again = raise_alert(config, T0 + timedelta(hours=3), "Ollama unreachable at X", "down", cause="ollama:X")
    assert again != rel and props(config, again)["count"] == 1


def test_a_note_the_person_closed_is_left_alone(config):
    rel = raise_alert(config, T0, "vault disk full", "full", cause="disk-full:vault")
    path = config.vault / rel
    path.write_text(path.read_text().replace("status: open", "status: resolved") + "\nMy note: freed it.\n")
    before = path.read_text()
    assert resolve_alerts(config, T0 + timedelta(minutes=5), "disk-full:vault", "space is back") == []
    assert path.read_text() == before
    assert raise_alert(config, T0 + timedelta(minutes=6), "vault disk full", "full", cause="disk-full:vault") != rel


def test_alerts_without_a_cause_stay_one_per_failure(config):
    first = raise_alert(config, T0, "planner failed", "bad reply")
    second = raise_alert(config, T0, "planner failed", "bad reply")
    assert first != second
