"""PDFs in `Papers/`, the README's own example: the shipped research agent reads and finds them,
and an agent whose `reads:` leave them out is told so by `search --agent` and `ask` ("1 better
match is outside planner's reads: Papers/"). Through the CLI, a real PDF, the real index."""

from __future__ import annotations

import json

from pdfmaker import make_pdf

SENTENCE = "The solar valve controller needs a 24 volt supply and draws 3 watts while idle."
QUERY = "solar valve controller 24 volt supply"


def with_paper(home) -> None:
    (home.vault / "Papers").mkdir(exist_ok=True)
    (home.vault / "Papers" / "Valve Spec.pdf").write_bytes(make_pdf(["Valve controller datasheet", SENTENCE]))
    home.run("index", check=True)


def test_the_shipped_research_agent_reads_papers(initialised):
    home = initialised
    assert "Papers/**" in json.loads(home.run("agent", "show", "research", "--json", check=True).stdout)["reads"]
    with_paper(home)
    done = home.run("search", QUERY, "--agent", "research", check=True)
    assert "[[Papers/Valve Spec.pdf#page=2]]" in done.stdout.splitlines()[0]
    assert "outside" not in done.stdout


def test_search_and_ask_say_when_reads_left_better_matches_out(initialised, ollama):
    home = initialised
    with_paper(home)
    done = home.run("search", QUERY, "--agent", "planner", check=True)
    assert "Valve Spec" not in done.stdout
    assert "1 better match is outside planner's reads: Papers/ (add it to `reads:`" in done.stdout, done.stdout
    person = home.run("search", QUERY, check=True)  # the person's own search has no reads to leave it out
    assert "Valve Spec" in person.stdout and "outside" not in person.stdout

    asked = home.run("ask", "planner", f"What does the {QUERY} need?", check=True)
    assert "better match is outside planner's reads: Papers/" in asked.stderr, asked.stderr
    answer = json.loads(home.run("ask", "planner", f"What does the {QUERY} need?", "--json", check=True).stdout)
    assert answer["outside_reads"].startswith("1 better match is outside planner's reads: Papers/")
