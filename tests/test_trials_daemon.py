"""Issue 28's acceptance, through a real daemon on a driven clock and the stand-in Ollama: a night
of trials of two aliases scripted to differ (one cuts off, one cites a missing note) on a day's
real runs ranks them correctly, holds `max_resident`, never runs during a block, writes nothing
into the vault but `Routine/Models.md`, and survives a kill -9 mid-trial (resumed, no duplicates);
`fire --model` through the daemon journals the alias and writes a proposal."""

from __future__ import annotations

import json
import textwrap
from datetime import datetime, timedelta, timezone

import pytest

from test_daemon import daemon, journal_rows, only_schedule, wait_for
from test_trials import CUT, GOOD, MISSING, MISTRAL, QWEN, snapshot
from waits import scaled

LLAMA = "llama3.2:3b"


def nightly(block_at: datetime) -> str:
    return textwrap.dedent(f"""\
        blocks:
          nightly:
            cron: "{block_at:%M %H} * * *"
            missed: skip
            steps:
              - agent: librarian
                task: Note the night.
                write: {{note: "Daily/Nightly.md", section: "Night"}}
        """)


def configure(home, window: str) -> None:
    text = home.config.read_text().replace("max_resident: 2", "max_resident: 1")
    text = text.replace("models:\n", 'models:\n  small:\n    model: "ollama_chat/llama3.2:3b"\n    num_ctx: 8192\n', 1)
    home.config.write_text(text + f'\ntimezone: UTC\ntrials: {{window: "{window}", clear: 15m}}\n')


def scripted(slow: dict):
    """Mistral answers well; qwen (analyst) is cut off every time; llama (small) cites a missing
    note in its first answer only. qwen's first answer is slow while ``slow["on"]``."""
    llama_calls = []

    def reply(model: str, messages: list):
        if model.startswith("qwen2.5:7b"):
            if slow.pop("on", False):
                return {**CUT, "delay": scaled(20)}
            return CUT
        if model.startswith("llama3.2"):
            llama_calls.append(1)
            return MISSING if len(llama_calls) == 1 else GOOD
        return GOOD
    return reply


@pytest.mark.daemon(budget=150)
def test_a_night_of_trials_ranks_the_models_holds_residency_and_survives_a_restart(initialised, ollama,
                                                                                     driven_clock):
    home = initialised
    now = driven_clock.now().astimezone(timezone.utc)
    opens = now.replace(second=0, microsecond=0) + timedelta(minutes=10)
    block_at = opens + timedelta(minutes=3)
    configure(home, f"{opens:%H:%M}-{opens + timedelta(hours=2):%H:%M}")
    only_schedule(home, nightly(block_at))
    slow: dict = {}
    ollama.reply_fn = scripted(slow)
    day = []
    for agent in ("strategist", "planner", "librarian"):  # the day's real runs, on mistral
        day.append(json.loads(home.run("fire", agent, "--json", check=True).stdout)["run"])
    for candidate in ("analyst", "small"):
        home.run("models", "try", candidate, "--runs", "today", check=True)
    assert journal_rows(home, "SELECT COUNT(*) FROM trials WHERE status='queued'") == [(6,)]
    before = snapshot(home.vault)
    slow["on"] = True
    trials_started = "SELECT COUNT(*) FROM trials WHERE status != 'queued'"

    with daemon(home, "first.log") as first:
        driven_clock.move_to(opens + timedelta(seconds=5))  # the window opens; the block is due in 3 min
        wait_for(lambda: "trials wait: nightly is due" in (home.root / "first.log").read_text(), 30,
                 "trials to wait for the coming block")
        assert journal_rows(home, trials_started) == [(0,)]
        driven_clock.move_to(block_at - timedelta(seconds=scaled(2)))
        wait_for(lambda: journal_rows(home, "SELECT id FROM trials WHERE status='running'"), 90, "a running trial")
        first.kill()  # kill -9 mid-trial: qwen's first answer is slow
        first.wait()
    assert journal_rows(home, "SELECT status, candidate FROM trials WHERE status='running'") == [("running", "analyst")]
    with daemon(home, "second.log"):
        wait_for(lambda: journal_rows(home, "SELECT COUNT(*) FROM trials WHERE status='done'") == [(6,)], 120,
                 "every trial, the interrupted one again")
        fired = json.loads(home.run("fire", "strategist", "--model", "small", "--json", check=True).stdout)
        home.run("ask", "planner", "What first?", "--model", "small", check=True)  # answered by the daemon
        assert "defined: small, general" in home.run("fire", "strategist", "--model", "gpt9").stderr

    pairs = journal_rows(home, "SELECT run, candidate, COUNT(*) FROM trials GROUP BY run, candidate")
    assert sorted((r, c) for r, c, _ in pairs) == sorted((r, c) for r in day for c in ("analyst", "small"))
    assert all(n == 1 for *_, n in pairs)  # resumed, never tried twice
    [(block_ended,)] = journal_rows(home, "SELECT ended_at FROM runs WHERE kind='block' AND block='nightly'")
    starts = [s for (s,) in journal_rows(home, "SELECT started_at FROM trials")]
    assert min(starts) > block_ended  # no trial ran while the block did (nor before it, as it was due soon)
    assert ollama.peak_resident <= 1  # max_resident: 1 held for trials and the block alike
    changed = {k for k, v in snapshot(home.vault).items() if before.get(k) != v}
    theirs = {"Daily/Nightly.md", fired["wrote"]["proposal"]}  # the block's note, the fire's proposal
    daemons = {k for k in changed if k == "Routine/Dashboard.md" or k.startswith("Routine/Graphs/")}
    assert changed - theirs - daemons == {"Routine/Models.md"}, changed  # the trials wrote only this

    scores = json.loads(home.run("models", "scores", "--json", check=True).stdout)
    assert [(s["model"], s["pass_rate"]) for s in scores["overall"]] == [
        (MISTRAL, 1.0), (LLAMA, round(2 / 3, 3)), (QWEN, 0.0)]
    # fire --model through the daemon: the alias it ran on is journaled, and it is a proposal
    assert fired["status"] == "proposal" and fired["wrote"]["proposal"].startswith("Drafts/")
    [(model, details)] = journal_rows(home, "SELECT model, details FROM runs WHERE id=?", fired["run"])
    assert model == f"ollama_chat/{LLAMA}" and json.loads(details)["model_alias"] == "small"
    assert journal_rows(home, "SELECT model FROM chat_messages WHERE role='assistant'") == [(f"ollama_chat/{LLAMA}",)]


def test_a_trial_waits_for_a_slot_that_came_due_before_its_timer_claimed_it(initialised, monkeypatch):
    """The double `nightly` row of the restart test: on a busy box the block's timer fires a moment
    after its slot's time, and a trial that looked in that moment saw the slot neither "due soon"
    (it is past) nor queued, so it started beside the block; a kill then cut the block short and
    the next start ran its slot again. A slot that is owed and not yet claimed holds trials too."""
    for key, value in initialised.env.items():
        monkeypatch.setenv(key, value)
    from routine.daemon.live import Live
    from routine.daemon.trials import NightTrials
    from routine.daemon.work import WorkQueue
    from routine.journal import Journal
    from routine.journal.slots import Slots
    from routine.schedule.cron import slot_key

    block_at = datetime(2026, 1, 7, 3, 15, tzinfo=timezone.utc)
    configure(initialised, "03:00-05:00")
    only_schedule(initialised, nightly(block_at))
    journal = Journal()
    Slots(journal.db).seen_since("nightly", block_at - timedelta(hours=1))  # the daemon knew the block before
    trials = NightTrials(Live(), WorkQueue(workers=1), lambda: None, lambda: block_at)
    trials.start()
    try:
        assert trials.busy(block_at - timedelta(seconds=2)) == "nightly is due at 03:15"
        # The slot's time has passed; its timer has not claimed it yet (a loaded box):
        assert trials.busy(block_at + timedelta(seconds=1)) == "nightly is due now (its 03:15 slot has not started)"
        Slots(journal.db).claim("nightly", slot_key(block_at))  # the timer claims it and queues the run
        Slots(journal.db).set("nightly", slot_key(block_at), "done")
        assert trials.busy(block_at + timedelta(seconds=30)) is None  # the block ran: trials may start
    finally:
        trials.halt()
        trials.stop()
        journal.close()


@pytest.mark.daemon(budget=90)
def test_models_try_and_agent_try_now_run_through_a_running_daemon_without_a_trials_window(initialised, ollama):
    """The shipped config has no trials window: `--now` asks the daemon to run them at once."""
    home = initialised
    ollama.reply_fn = lambda model, messages: GOOD
    for agent in ("strategist", "planner"):
        home.run("fire", agent, check=True)
    with daemon(home, "now.log"):
        out = home.run("models", "try", "analyst", "--runs", "today", "--now", check=True).stdout
        assert "The daemon runs them now" in out, out
        wait_for(lambda: journal_rows(home, "SELECT COUNT(*) FROM trials WHERE status='done'") == [(2,)], 60,
                 "the trials asked for now")
        note = (home.vault / "Agents" / "Planner.md").read_text()
        (home.vault / "Drafts").mkdir(exist_ok=True)
        (home.vault / "Drafts" / "Planner v2.md").write_text(note + "\nPlan briefly.\n")
        said = home.run("agent", "try", "planner", "--variant", "Drafts/Planner v2.md", "--runs", "today",
                        check=True).stdout  # queued: no trials window, so it waits for --now
        assert "tries Drafts/Planner v2.md on 1 run(s) of planner once routine.yaml has a trials window" in said, said
        said = home.run("agent", "try", "planner", "--variant", "Drafts/Planner v2.md", "--runs", "today", "--now",
                        check=True).stdout  # the same variant, now: the queued one runs at once, and says so
        assert "This variant of planner is queued already: the daemon tries it now" in said, said
        wait_for(lambda: journal_rows(home, "SELECT COUNT(*) FROM prompt_trials") == [(1,)],
                 60, "the prompt trial asked for now")
        again = home.run("agent", "try", "planner", "--variant", "Drafts/Planner v2.md", "--runs", "today", "--now",
                         check=True).stdout
        assert "was tried before" in again and "nothing new is queued" in again, again
