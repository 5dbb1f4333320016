"""Vault triggers in the running daemon: a note in the Inbox gets its Librarian run, once."""

from __future__ import annotations

import json
import textwrap
import time

from test_daemon import all_handled, daemon, journal_rows, only_schedule, settled_as, wait_for

INBOX_TRIGGER = textwrap.dedent("""\
    triggers:
      - "on": created
        path: "Inbox/*.md"
        agent: librarian
        task: "File [[{{ path }}]] ({{ event }})."
        debounce: 2s
        write: {note: "Daily/{{ today }}.md", section: "Inbox"}
      - "on": modified
        path: "Daily/*.md"
        agent: librarian
        task: "The daily note {{ path }} changed."
        debounce: 1s
        write: {note: "Inbox/daily changes.md", section: "Daily changes"}
    """)


def trigger_runs(home, path_like="%"):
    return journal_rows(home, "SELECT trigger, status, details FROM runs WHERE trigger LIKE 'trigger:%' "
                              "AND trigger LIKE ? ORDER BY started_at", f"trigger:{path_like}")


def test_a_note_dropped_in_the_inbox_gets_one_librarian_run_and_its_own_writes_none(initialised, ollama):
    home = initialised
    only_schedule(home, INBOX_TRIGGER)
    with daemon(home):
        (home.vault / "Inbox" / "Call with Sam.md").write_text("Sam wants the battery report by Friday.\n")
        runs = wait_for(
            lambda: [r for r in trigger_runs(home, "Inbox/%") if r[1] != "running"], 60, "the librarian run"
        )
        # Its write to the daily note is seen, and known as its own: not a change, no Daily trigger.
        daily = next((home.vault / "Daily").glob("*.md"))
        assert wait_for(lambda: settled_as(home, f"Daily/{daily.name}"), 60, "the watcher to settle that write") \
            == ["own write"]
        wait_for(lambda: all_handled(home), 60, "the daemon to be idle")
        assert trigger_runs(home, "Daily/%") == []
        # The person's own edit of that same daily note, a moment later, does.
        daily.write_text(daily.read_text() + "\nAlso: call the supplier.\n")
        wait_for(lambda: [r for r in trigger_runs(home, "Daily/%") if r[1] != "running"], 20,
                 "the person's edit to fire the Daily trigger")
        # That run writes into Inbox/, and that is not a new Inbox note to file either.
        assert wait_for(lambda: settled_as(home, "Inbox/daily changes.md"), 60, "the watcher to settle it") \
            == ["own write"]
        wait_for(lambda: all_handled(home), 60, "the daemon to be idle")
        assert len(trigger_runs(home, "Inbox/%")) == 1 and len(trigger_runs(home, "Daily/%")) == 1
    assert runs[0][1] == "ok"
    details = json.loads(runs[0][2])
    trigger = {k: details[k] for k in ("trigger", "event", "path", "seen_by")}
    assert trigger == {"trigger": "test#0", "event": "created", "path": "Inbox/Call with Sam.md", "seen_by": "watch"}
    assert details["tokens_counted"] <= details["tokens_limit"]  # what the run sent, counted
    # The note was in the Librarian's context and the task named it.
    prompt = json.loads(
        journal_rows(home, "SELECT prompt FROM runs WHERE trigger='trigger:Inbox/Call with Sam.md'")[0][0]
    )
    user = prompt[-1]["content"]
    assert "File [[Inbox/Call with Sam.md]] (created)." in user and "battery report by Friday" in user
    assert "## Inbox" in daily.read_text()


def test_a_hundred_rapid_saves_within_the_debounce_make_one_run(initialised, ollama):
    home = initialised
    only_schedule(home, INBOX_TRIGGER.replace('"on": created', '"on": modified', 1))
    note = home.vault / "Inbox" / "draft.md"
    note.write_text("v0\n")
    with daemon(home):
        for i in range(100):
            note.write_text(f"v{i + 1}: the person is typing\n")
            time.sleep(0.005)  # pacing: a person's saves, a few milliseconds apart (waits for nothing)
        wait_for(lambda: [r for r in trigger_runs(home, "Inbox/%") if r[1] != "running"], 60, "the run")
        wait_for(lambda: all_handled(home), 60, "the daemon to be idle")
        # The whole burst settled as one change. On a loaded box the watcher's thread can hand
        # over the burst's last events after that settle: they find the same bytes ("unchanged")
        # and fire nothing.
        changes = [o for o in settled_as(home, "Inbox/draft.md") if o != "unchanged"]
        assert changes == ["modified"]
    assert len(trigger_runs(home, "Inbox/%")) == 1


def test_without_inotify_the_reconcile_fires_what_was_missed(initialised, ollama):
    home = initialised
    only_schedule(home, INBOX_TRIGGER)
    home.config.write_text(home.config.read_text() + "watch: {inotify: false, reconcile: 2s}\n")
    with daemon(home):
        st = json.loads(home.run("status", "--json", check=True).stdout)
        assert st["vault_watch"]["mode"] == "reconcile only"
        (home.vault / "Inbox" / "unseen.md").write_text("no inotify event for this one\n")
        runs = wait_for(lambda: [r for r in trigger_runs(home, "Inbox/%") if r[1] != "running"], 60, "the run")
    assert json.loads(runs[0][2])["seen_by"] == "reconcile"


def test_a_note_that_arrived_while_the_daemon_was_down_fires_at_start(initialised, ollama):
    home = initialised
    only_schedule(home, INBOX_TRIGGER)
    with daemon(home, "first.log"):
        pass  # the first start takes the vault's baseline
    (home.vault / "Inbox" / "overnight.md").write_text("written on the phone, synced at night\n")
    with daemon(home, "second.log"):
        runs = wait_for(lambda: [r for r in trigger_runs(home, "Inbox/%") if r[1] != "running"], 60, "the run")
    assert runs[0][0] == "trigger:Inbox/overnight.md"


def test_the_daemons_search_index_follows_the_vault_watcher(initialised, ollama):
    """A note saved in Obsidian becomes searchable without any `routine index`."""
    home = initialised
    only_schedule(home, "triggers: []\n")
    home.config.write_text(home.config.read_text() + "\nmemory: {embedding_model: 'ollama:nomic-embed-text'}\n")

    def found(query):
        hits = json.loads(home.run("search", query, "--json", check=True).stdout)
        return [h["path"] for h in hits]

    with daemon(home):
        note = home.vault / "Projects" / "Kiln.md"
        note.parent.mkdir(exist_ok=True)
        text = "# Kiln\nThe kiln controller firmware needs a thermocouple calibration.\n"
        note.write_text(text)
        # The stand-in's embeddings hash the exact text, so a query equal to the chunk's text finds it.
        from routine.memory.chunks import chunk_note

        query = chunk_note("Projects/Kiln.md", text, 1000)[0].text
        wait_for(lambda: found(query)[:1] == ["Projects/Kiln.md"], 60, "the new note to be searchable")
        moved = home.vault / "Projects" / "Studio Kiln.md"
        note.rename(moved)
        query = chunk_note("Projects/Studio Kiln.md", text, 1000)[0].text  # a chunk carries its note's name
        wait_for(lambda: found(query)[:1] == ["Projects/Studio Kiln.md"], 60, "the move to reach the index")
        assert "Projects/Kiln.md" not in found(query)
        moved.unlink()
        wait_for(lambda: "Projects/Studio Kiln.md" not in found(query), 60, "the deletion to reach the index")
