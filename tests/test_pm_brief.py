"""The project manager's brief wherever the manager runs, through the CLI and the stand-in Ollama:
a bare `routine fire <PM>` gets the project's facts; the weekly review gets the reviews and
digests of earlier weeks and the text of the key results the home note links."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone

from test_projects import HOME_NOTE, MISTRAL, PROJECT
from test_projects import cli as cli  # noqa: F401  (the fixture)

FACTS = "The project's facts, computed from its case file:"
OKRS = """---
tags: [plan]
---
# OKRs

%%
## Objective: an example in a comment
- KR 9.9: not a real key result — current 0 / target 1
%%

## Objective 1: Launch the shop
- KR 1.1: 40 people sign up before launch — current 12 / target 40 — by 2026-12-15
- KR 1.2: the shop loads in under 2 seconds — current 3.1 s / target 2 s
"""


def write(home, rel: str, text: str) -> None:
    path = home.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def pm_requests(ollama) -> list[str]:
    return [r["messages"][-1]["content"] for r in ollama.requests
            if r["_path"] == "/api/chat" and "project manager of" in r["messages"][0]["content"]]


def test_a_bare_fire_of_the_manager_gets_the_project_brief(cli, ollama):
    cli("project", "new", PROJECT, "--goal", "Open the shop")
    cli("project", "assign", PROJECT, "Ada", "--task", "Write the launch email")
    ollama.script(MISTRAL, ["**Progress** — Ada: the launch email is open."])
    cli("fire", "acme-launch-pm")
    prompt = pm_requests(ollama)[-1]
    assert FACTS in prompt and f"Project {PROJECT} (active); goal: Open the shop." in prompt, prompt
    assert "Ada (person): Write the launch email (open)" in prompt

    # The brief (and so the digest) says which tasks are due tomorrow and which are overdue.
    today = date.today()  # the run's day: the fire is now
    cli("project", "assign", PROJECT, "Ada", "--task", "Print the flyers", "--due", str(today + timedelta(days=1)))
    cli("project", "assign", PROJECT, "Ada", "--task", "Book the hall", "--due", str(today - timedelta(days=2)))
    ollama.script(MISTRAL, ["**Progress** — Ada: two tasks need her."])
    cli("fire", "acme-launch-pm")
    prompt = pm_requests(ollama)[-1]
    assert "Print the flyers (open, due tomorrow)" in prompt
    assert f"Book the hall (open, overdue since {today - timedelta(days=2)})" in prompt

    # A task that asks for the brief itself gets it once.
    ollama.script(MISTRAL, ["Noted."])
    cli("fire", "acme-launch-pm", "--task", "Say what stands out.\n\n{{ project_brief }}")
    prompt = pm_requests(ollama)[-1]
    assert FACTS not in prompt and prompt.count("Project Acme Launch (active)") == 1


def test_the_weekly_review_gets_earlier_weeks_and_the_key_results_text(cli, ollama):
    home = cli.home
    cli("project", "new", PROJECT)
    write(home, "Plans/OKRs.md", OKRS)
    path = home.vault / HOME_NOTE
    path.write_text(path.read_text(encoding="utf-8").replace("key_results: []", 'key_results: ["[[OKRs#KR 1.1]]"]'),
                    encoding="utf-8")
    digests = f"Projects/{PROJECT}/Digests"
    yesterday = (date.today() - timedelta(days=1)).isoformat()
    write(home, f"{digests}/2026-W01.md", "## Weekly review\n\nThe landing page was drafted; signups stood at 7.\n")
    write(home, f"{digests}/{yesterday}.md", "## Daily digest\n\nAda sent the launch email to 30 friends.\n")

    ollama.script(MISTRAL, ["**Progress** — signups 12 of 40."])
    _, out, _ = cli("fire", "acme-launch-review", "--json")
    assert [s["status"] for s in json.loads(out)["steps"]] == ["ok"], out
    prompt = pm_requests(ollama)[-1]
    assert "KR 1.1: 40 people sign up before launch — current 12 / target 40 — by 2026-12-15" in prompt, prompt
    assert "KR 1.2" not in prompt and "KR 9.9" not in prompt  # only the linked one, never the commented example
    assert "The landing page was drafted; signups stood at 7." in prompt  # an earlier week's review
    assert "Ada sent the launch email to 30 friends." in prompt  # a daily digest
    assert prompt.index("The landing page was drafted") < prompt.index("Ada sent the launch email")


def _changed_line(prompt: str) -> str:
    return next(line for line in prompt.splitlines() if line.startswith("Changed since yesterday:"))


def test_changed_since_yesterday_lists_only_the_persons_changes(cli, ollama):
    """The brief's "Changed since yesterday" names the notes the person changed: never routine's own
    digest or a task's result note, nor a note of the person's that only routine wrote into since."""
    import os
    import time

    home = cli.home
    cli("project", "new", PROJECT, "--goal", "Open the shop")
    folder = HOME_NOTE.rsplit("/", 1)[0]
    notes = f"{folder}/Venue notes.md"
    write(home, notes, "# Venue notes\n\nThe hall holds 80 people.\n")
    old = time.time() - 3 * 86400
    os.utime(home.vault / notes, (old, old))  # the person wrote it three days ago
    write(home, f"{folder}/Digests/{date.today()}.md",
          "---\nroutine: {agent: acme-launch-pm, run: r1, at: '2026-11-27T20:30:00+01:00'}\n---\n## Daily digest\n"
          "%% routine:begin daily-digest agent=acme-launch-pm %%\nAda: the launch email is open.\n"
          "%% routine:end daily-digest %%\n")
    stamp = f"routine: {{agent: research, run: r2, at: '{datetime.now(timezone.utc).isoformat()}'}}"
    write(home, f"{folder}/Write the launch email.md",  # a task's result, as routine writes it
          f"---\n{stamp}\ntags: [routine/research]\nowner: '[[Research]]'\n---\nA draft of the launch email.\n")
    ollama.script(MISTRAL, ["**Progress** — nothing new."])
    cli("fire", "acme-launch-pm")
    assert _changed_line(pm_requests(ollama)[-1]) == f"Changed since yesterday: [[{HOME_NOTE[:-3]}]]"

    # Routine writes a section into the person's old note: still not a change of theirs.
    text = (home.vault / notes).read_text(encoding="utf-8")
    write(home, notes, text + "\n## Checks\n%% routine:begin checks agent=critic %%\nThe hall was booked.\n"
          "%% routine:end checks %%\n")
    ollama.script(MISTRAL, ["**Progress** — nothing new."])
    cli("fire", "acme-launch-pm")
    assert "Venue notes" not in _changed_line(pm_requests(ollama)[-1])

    # The person adds a line: now it is.
    write(home, notes, (home.vault / notes).read_text(encoding="utf-8") + "\nThe caterer needs a head count.\n")
    ollama.script(MISTRAL, ["**Progress** — the venue notes changed."])
    cli("fire", "acme-launch-pm")
    assert f"[[{folder}/Venue notes]]" in _changed_line(pm_requests(ollama)[-1])
