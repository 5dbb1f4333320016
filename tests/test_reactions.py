"""What a vault change means, decided without a daemon (``flows/reactions.py``): real notes on disk
from a fresh `routine init`, the configuration and agents as the daemon loads them, and the reactions
``on_vault_change`` returns, in the order the daemon applies them."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from routine.config.agent_notes import load_agents
from routine.config.loader import load_config
from routine.flows.reactions import (
    Answer,
    Chat,
    ChatGone,
    Fire,
    Graph,
    Index,
    LookForTasks,
    React,
    Reload,
    StaleQA,
    TellPerson,
    View,
    on_vault_change,
)
from routine.schedule.model import Trigger
from routine.vault.atomic import add_write_listener, atomic_write, remove_write_listener
from routine.vault.chat_notes import answer_callout
from routine.vault.frontmatter import join_frontmatter
from routine.vault.sections import content_sha
from routine.watch.changes import Change
from routine.watch.state import FileStates
from routine.watch.watcher import VaultWatcher
from waits import wait_until

PROJECT = "Acme Launch"
HOME_NOTE = f"Projects/{PROJECT}/{PROJECT}.md"
INBOX = Trigger(id="t#0", file="t", on="created", path="Inbox/*.md", agent="librarian", where=(("status", "inbox"),),
                debounce=timedelta(seconds=2))


@pytest.fixture
def view_of(initialised, monkeypatch):
    """A view as the daemon builds one, read afresh (the config may have changed since)."""
    monkeypatch.setenv("ROUTINE_STATE_DIR", str(initialised.state))
    monkeypatch.setenv("OLLAMA_HOST", initialised.env["OLLAMA_HOST"])

    def make(triggers: tuple[Trigger, ...] = (INBOX,), chats: frozenset[str] = frozenset()) -> View:
        config = load_config(str(initialised.config))
        agents, _ = load_agents(config)
        return View(config, agents, triggers, chats=chats)

    return make


def kinds(reactions: list) -> list[str]:
    return [type(r).__name__ for r in reactions]


def test_a_triggers_glob_and_where_decide_whether_it_fires(initialised, view_of):
    vault = initialised.vault
    (vault / "Inbox" / "Call with Sam.md").write_text("---\nstatus: inbox\n---\nSam wants the report.\n")
    (vault / "Inbox" / "Filed.md").write_text("---\nstatus: done\n---\nAlready filed.\n")
    view = view_of()
    fired = on_vault_change(view, Change("created", "Inbox/Call with Sam.md"))
    assert [r.trigger.id for r in fired if isinstance(r, Fire)] == ["t#0"]
    assert Index(Change("created", "Inbox/Call with Sam.md")) in fired  # the search index hears of it too
    assert not [r for r in on_vault_change(view, Change("created", "Inbox/Filed.md")) if isinstance(r, Fire)]
    assert not [r for r in on_vault_change(view, Change("modified", "Inbox/Call with Sam.md")) if isinstance(r, Fire)]
    # A PDF: only the search index reads it.
    assert on_vault_change(view, Change("created", "Inbox/scan.pdf")) == [Index(Change("created", "Inbox/scan.pdf"))]


def test_a_home_note_edit_reloads_looks_for_tasks_and_the_manager_reacts_unless_react_is_off(initialised, view_of):
    home = initialised
    home.run("project", "new", PROJECT, "--goal", "Launch on 1 December", check=True)
    change = Change("modified", HOME_NOTE)
    reactions = on_vault_change(view_of(), change)
    case = [r for r in reactions if isinstance(r, (Reload, LookForTasks, React))]
    assert case[:2] == [Reload(HOME_NOTE), LookForTasks(f"Projects/{PROJECT}")], reactions
    react = case[2]
    assert isinstance(react, React) and react.project == PROJECT and react.rel == HOME_NOTE, reactions
    assert react.manager and react.slug == "acme-launch"

    note = home.vault / HOME_NOTE
    text = note.read_text()
    assert "cadence:" in text, text
    note.write_text(text.replace("cadence:\n", "cadence:\n  react: 'off'\n", 1))
    after = on_vault_change(view_of(), change)
    assert Reload(HOME_NOTE) in after and not [r for r in after if isinstance(r, React)], after


def test_a_task_line_for_a_person_tells_them_and_one_for_nobody_tells_no_one(initialised, view_of):
    home = initialised
    home.run("project", "new", PROJECT, check=True)
    home.run("project", "assign", PROJECT, "Ada", "--role", "client lead", check=True)
    home.config.write_text(home.config.read_text() + "\nnotify: {urls: ['json://127.0.0.1:9/hook']}\n")
    note = home.vault / HOME_NOTE
    note.write_text(note.read_text().replace(
        "## Tasks\n", "## Tasks\n\n- [ ] Call the printer [assignee:: [[Ada]]] 📅 2026-11-30\n"
                      "- [x] Book the room [assignee:: [[Ada]]]\n", 1))
    told = [r for r in on_vault_change(view_of(), Change("modified", HOME_NOTE)) if isinstance(r, TellPerson)]
    assert [(r.title, r.rel) for r in told] == [("Task for Ada: Call the printer", HOME_NOTE)], told
    assert "due 2026-11-30" in told[0].body
    home.config.write_text(home.config.read_text().replace("notify: {urls: ['json://127.0.0.1:9/hook']}", ""))
    assert not [r for r in on_vault_change(view_of(), Change("modified", HOME_NOTE)) if isinstance(r, TellPerson)]


def test_an_artifact_edited_after_its_qa_pass_needs_qa_again_and_a_deleted_note_only_reloads_a_home(initialised,
                                                                                                        view_of):
    home = initialised
    home.run("project", "new", PROJECT, check=True)
    rel, body = f"Projects/{PROJECT}/Report.md", "# Report\n\nFinal numbers.\n"
    props = {"type": "information product", "qa": "passed", "qa_sha": content_sha(body)}
    (home.vault / rel).write_text(join_frontmatter(props, body))
    case_file = (Reload, StaleQA, TellPerson, LookForTasks, React)

    def decided(kind: str, note: str) -> list:
        return [r for r in on_vault_change(view_of(), Change(kind, note)) if isinstance(r, case_file)]

    folder = LookForTasks(f"Projects/{PROJECT}")
    assert decided("modified", rel) == [folder]  # as it passed QA
    (home.vault / rel).write_text(join_frontmatter(props, body.replace("numbers.", "numbers, revised.")))
    assert decided("modified", rel) == [StaleQA(rel), folder]
    assert decided("deleted", rel) == []
    assert decided("deleted", HOME_NOTE) == [Reload(HOME_NOTE)]


def test_a_question_note_answered_in_obsidian_is_an_answer(initialised, view_of):
    vault = initialised.vault
    rel = "Inbox/Question q-7.md"
    note = vault / rel
    note.write_text("---\nquestion: q-7\nanswer: ''\nstate: open\ntags: [routine/question]\n---\n# Ship it?\n")
    assert not [r for r in on_vault_change(view_of(), Change("modified", rel)) if isinstance(r, Answer)]
    note.write_text(note.read_text().replace("answer: ''", "answer: 'yes'"))
    assert [r for r in on_vault_change(view_of(), Change("modified", rel)) if isinstance(r, Answer)] == \
        [Answer(rel, "q-7", "yes")]
    # Settled, it answers nothing again.
    note.write_text(note.read_text().replace("state: open", "state: answered"))
    assert not [r for r in on_vault_change(view_of(), Change("modified", rel)) if isinstance(r, Answer)]


def test_a_chat_note_waits_for_its_answer_only_while_the_persons_message_is_last(initialised, view_of):
    vault = initialised.vault
    rel = "Notes/Talk.md"  # outside the chats folder: remembered as a chat once seen
    (vault / "Notes").mkdir(exist_ok=True)
    note = vault / rel
    note.write_text("---\nchat: librarian\n---\nWhat did Sam want?\n")
    assert [r for r in on_vault_change(view_of(), Change("modified", rel)) if isinstance(r, Chat)] == \
        [Chat(rel, "librarian", True)]
    note.write_text(note.read_text() + "\n" + answer_callout("librarian", datetime(2026, 11, 28, 9), "The report.", []))
    assert [r for r in on_vault_change(view_of(), Change("modified", rel)) if isinstance(r, Chat)] == \
        [Chat(rel, "librarian", False)]
    note.write_text("No longer a chat.\n")
    reactions = on_vault_change(view_of(chats=frozenset({rel})), Change("modified", rel))
    assert ChatGone(rel) in reactions and not [r for r in reactions if isinstance(r, Chat)]


def test_routines_own_write_reaches_no_reaction_and_the_persons_next_edit_does(initialised, view_of, tmp_path):
    """The watcher the daemon runs, in front of ``on_vault_change``: routine's own write is no change."""
    vault = initialised.vault
    seen: list[Change] = []
    reactions: list = []
    view = view_of()

    def on_change(change: Change) -> None:
        seen.append(change)
        reactions.extend(on_vault_change(view, change))

    states = FileStates(tmp_path / "watch.sqlite3")
    watcher = VaultWatcher(vault, on_change, states, quiet_for=lambda rel: 0.3)
    add_write_listener(watcher.own_write)
    try:
        watcher.start()
        atomic_write(vault / "Inbox" / "Written by routine.md", "---\nstatus: inbox\n---\nA run's output.\n")
        (vault / "Inbox" / "By the person.md").write_text("---\nstatus: inbox\n---\nMine.\n")
        wait_until(lambda: any(c.rel == "Inbox/By the person.md" for c in seen), 30, "the person's note settled")
        wait_until(lambda: any(s.rel == "Inbox/Written by routine.md" and s.as_dict()["outcome"] == "own write"
                               for s in watcher.recent()), 30, "routine's own note settled as its own write")
        assert [c.rel for c in seen] == ["Inbox/By the person.md"], seen
        assert [r.change.rel for r in reactions if isinstance(r, Fire)] == ["Inbox/By the person.md"]
        assert [r.change.rel for r in reactions if isinstance(r, Graph)] == ["Inbox/By the person.md"]
    finally:
        remove_write_listener(watcher.own_write)
        watcher.stop()
        states.close()
