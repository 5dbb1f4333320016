"""QA as a person meets it, from a fresh `routine init`, through the CLI and the stand-in Ollama:
a reviewer that answers exactly as its own agent note says passes a sound report; the verdict
is read by the one reader the conditional handoffs use too."""

from __future__ import annotations

import json

from routine.verdicts import verdict_of
from test_projects import PROJECT, properties
from test_projects import cli as cli  # noqa: F401  (the fixture)

REPORT = f"Projects/{PROJECT}/Garden report.md"
QA_SECTION = "## When the task is a QA review of an artifact"


def write(home, rel: str, text: str) -> None:
    path = home.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def qa_requests(ollama) -> list[list[dict]]:
    return [r["messages"] for r in ollama.requests
            if r["_path"] == "/api/chat" and "Review the artifact" in json.dumps(r["messages"])]


def reviewer_following_its_prompt(verdict: str = "PASS"):
    """A reviewer that writes exactly what its own agent note (the system prompt) asks for a QA
    review, with ``verdict`` chosen; an agent note without such a section gets its general form
    (the shipped Guardian's `**Verdict** — `OK`…` line), as a model following it would write."""

    def reply(model: str, messages: list[dict]) -> str | None:
        system, task = messages[0]["content"], messages[-1]["content"]
        if "Review the artifact" not in task:
            return None
        if QA_SECTION not in system:
            return ("**Grounding**\nChecked 2 claims; all supported by the notes.\n\n"
                    "**Verdict** — `OK`, nothing to flag.")
        section = system.split(QA_SECTION, 1)[1].split("\n## ", 1)[0]
        form = [line for line in section.splitlines() if line.startswith(("**", "- "))]
        filled = []
        for line in form:
            if line.startswith("**Verdict:**"):
                line = line.replace("PASS or FAIL", verdict).replace("one sentence why", "it does what it says")
            elif line.startswith("- "):
                line = "- Findings cite their sources: the roof claim cites [[Garden Shed]]"
            filled.append(line)
        return "\n".join(filled)

    return reply


def test_a_report_passes_qa_with_reviewers_that_follow_their_own_prompt(cli, ollama):
    home = cli.home
    cli("project", "new", PROJECT)
    write(home, f"Projects/{PROJECT}/Garden Shed.md", "# Garden Shed\n\nThe roof leaks.\n")
    write(home, REPORT, "---\ntype: intellectual\n---\n# Garden report\n\nDoes the shed need a new roof? "
                        "Yes: the roof leaks ([[Garden Shed]]).\n")
    ollama.reply_fn = reviewer_following_its_prompt("PASS")
    _, out, _ = cli("artifact", "qa", REPORT, "--json")
    result = json.loads(out)
    assert result["verdict"] == "passed" and result["promoted"] is True, result
    assert [r["verdict"] for r in result["reviews"]] == ["pass", "pass"]
    assert "the roof claim cites [[Garden Shed]]" in result["reviews"][0]["findings"][0]
    props = properties(home, REPORT)
    assert props["type"] == "information-product" and props["qa"] == "passed"

    # Both reviewers were asked, in their agent note and in the task, for the same form.
    requests = qa_requests(ollama)
    assert len(requests) == 2
    for messages in requests:
        own = messages[0]["content"].split(QA_SECTION, 1)[1].split("\n## ", 1)[0]
        form = "\n".join(line for line in own.splitlines() if line.startswith(("**", "- ")))
        assert form and form in messages[-1]["content"], (form, messages[-1]["content"])

    # The same reviewer saying FAIL fails it, its finding recorded.
    write(home, REPORT, "---\ntype: intellectual\n---\n# Garden report\n\nThe roof is fine.\n")
    ollama.reply_fn = reviewer_following_its_prompt("FAIL")
    code, out, _ = cli("artifact", "qa", REPORT, ok=False)
    assert code == 1 and properties(home, REPORT)["qa"] == "failed"


def test_one_reader_for_every_verdict_form_the_prompts_ask_for():
    assert verdict_of("**Verdict:** PASS — it does what it says.\n**Findings**\n- fine") == "pass"
    assert verdict_of("**Verdict** — `OK`, nothing to flag.") == "ok"
    assert verdict_of("**Verdict:** WATCH — the deadline is close.") == "watch"
    assert verdict_of("VERDICT: **FAIL**\nFINDINGS:\n- no sources") == "fail"
    assert verdict_of("VERDICT: needs review") == "needs review"
    assert verdict_of("VERDICT: ok, it is ready to build on") == "ok"
    assert verdict_of("Verdicts are hard.\n## Verdict\n") is None
    from routine.config import conditions
    from routine.flows import qa

    assert conditions.verdict_of is verdict_of and qa.verdict_of is verdict_of
    assert qa.parse_review("**Verdict:** OK — fine.")[0] == "fail"
    assert "not PASS or FAIL" in qa.parse_review("**Verdict:** OK — fine.")[1][0]


def test_reviewers_see_what_the_artifact_cites_within_their_scope_and_may_read_more(cli, ollama):
    home = cli.home
    cli("project", "new", PROJECT)
    write(home, f"Projects/{PROJECT}/Garden Shed.md", "# Garden Shed\n\nThe roof leaks in three places.\n")
    write(home, f"Projects/{PROJECT}/Budget.md", "# Budget\n\nThe roof may cost 400 euros.\n")
    write(home, "Private/Diary.md", "# Diary\n\nA private thought about the neighbour.\n")
    write(home, REPORT, '---\ntype: intellectual\nsources: ["[[Plans/OKRs]]"]\n---\n# Garden report\n\n'
                        "The roof leaks ([[Garden Shed]]); see also [[Diary]].\n")

    def reviewer(model: str, messages: list[dict]) -> dict | str | None:
        if "Review the artifact" not in str(messages[1]["content"]):
            return None
        if not any(m.get("role") == "tool" for m in messages):
            return {"tool_calls": [{"name": "read_note", "arguments": {"path": f"Projects/{PROJECT}/Budget.md"}}]}
        return "**Verdict:** PASS — the roof claim is in [[Garden Shed]].\n**Findings**\n- Sources: cited and checked"

    ollama.reply_fn = reviewer
    _, out, _ = cli("artifact", "qa", REPORT, "--json")
    assert json.loads(out)["verdict"] == "passed", out
    first = [r for r in ollama.requests if r["_path"] == "/api/chat" and "Review the artifact" in json.dumps(r)
             and not any(m.get("role") == "tool" for m in r["messages"])]
    assert len(first) == 2, len(first)  # the Critic's and the Guardian's first request
    for request in first:
        prompt = request["messages"][1]["content"]
        assert "The roof leaks in three places." in prompt  # a cited note, in the reviewer's reads
        assert "# OKRs" in prompt or "Objective 1" in prompt  # its `sources:`
        assert "private thought" not in prompt  # cited, but outside every reviewer's reads
        assert [t["function"]["name"] for t in request["tools"]] == ["read_note"]
    after_tool = [r for r in ollama.requests if r["_path"] == "/api/chat"
                  and any(m.get("role") == "tool" for m in r["messages"])]
    assert after_tool and all("400 euros" in json.dumps(r["messages"]) for r in after_tool)


def long_report(flawed: int | None = None) -> str:
    sections = []
    for n in range(1, 21):
        lines = [f"In week {n} the {word} bed was weeded, watered and mulched before the frost, and the notes say why."
                 for word in ("tomato", "bean", "onion", "carrot", "herb", "berry", "squash", "salad")] * 5
        if n == flawed:
            lines.append("TODO: fill in the harvest numbers here.")
        sections.append(f"## Section {n}\n\n" + "\n\n".join(lines))
    return "---\ntype: intellectual\n---\n# Garden season\n\n" + "\n\n".join(sections) + "\n"


def test_a_long_artifact_is_reviewed_part_by_part_within_the_window(cli, ollama):
    home = cli.home
    cli("project", "new", PROJECT)
    text = long_report()
    assert len(text) > 73_000
    write(home, REPORT, text)

    def reviewer(model: str, messages: list[dict]) -> str | None:
        task = str(messages[-1]["content"])
        if "Review the artifact" not in task:
            return None
        if "TODO" in task.split("The artifact", 2)[-1]:
            return "**Verdict:** FAIL — a placeholder is left.\n**Findings**\n- No placeholders: a TODO is left"
        return "**Verdict:** PASS — complete.\n**Findings**\n- Complete: nothing is missing"

    ollama.reply_fn = reviewer
    _, out, _ = cli("artifact", "qa", REPORT, "--json")
    result = json.loads(out)
    assert result["verdict"] == "passed" and result["promoted"] is True, result
    critic = [r["messages"][-1]["content"] for r in ollama.requests
              if r["_path"] == "/api/chat" and "You are **the Critic**" in r["messages"][0]["content"]
              and "Review the artifact" in r["messages"][-1]["content"]]
    assert 3 <= len(critic) <= 20 and len(result["reviews"][0]["runs"]) == len(critic), len(critic)
    for n in range(1, 21):  # every section reviewed, each in one part
        assert sum(f"## Section {n}\n" in prompt for prompt in critic) == 1, n
    assert ollama.truncated == []  # no request was over the window

    # A placeholder in section 7: QA fails, and the QA note names the section that failed.
    write(home, REPORT, long_report(flawed=7))
    code, out, _ = cli("artifact", "qa", REPORT, "--json", ok=False)
    result = json.loads(out)
    assert code == 1 and result["verdict"] == "failed"
    for review in result["reviews"]:  # the part that holds section 7 failed, and only that part
        failed = review["failed_sections"]
        assert "Section 7" in failed and len(failed) <= 3 and "Section 1" not in failed, failed
    named = ", ".join(f"§ {name}" for name in result["reviews"][0]["failed_sections"])
    qa_note = home.note(f"Projects/{PROJECT}/QA/Garden report.md")
    assert f"failed in: {named}" in qa_note and f"{named}: No placeholders: a TODO is left" in qa_note
    assert f"failed in: {named}" in home.note(REPORT) and properties(home, REPORT)["qa"] == "failed"


def test_parts_fit_the_budget_and_name_their_sections():
    from routine.flows.review_parts import split_for_review
    from routine.models.tokens import Estimate

    counter = Estimate()
    short = "Intro line.\n\n## A\nSmall."
    assert [p.sections for p in split_for_review(short, 500, counter)] == [("(top)", "A")]
    huge = "## Big\n\n" + "\n\n".join(f"Paragraph {i} " + "words " * 60 for i in range(30)) + "\n\n## Small\nEnd."
    parts = split_for_review(huge, 400, counter)
    assert len(parts) > 3 and all(counter.text(p.text) <= 400 for p in parts)
    assert parts[0].sections == ("Big (1 of " + parts[0].sections[0].split(" of ")[1],)
    assert parts[-1].sections[-1] == "Small" and "".join(p.text for p in parts).count("Paragraph") == 30
    one_line = "x" * 5000  # a paragraph longer than any part: cut at the longest head that fits
    assert "".join(p.text for p in split_for_review(one_line, 300, counter)) == one_line


def test_a_verdict_is_read_only_from_the_reviewers_own_words():
    """The Critic says `VERDICT: needs review`, then quotes a note that says ok: in a blockquote,
    in a code fence, or in the other form. The quote never outvotes the reviewer's own line."""
    from routine.verdicts import Form

    own = "The plan skips the supplier call.\nVERDICT: needs review\n\nThe draft itself claims:\n"
    assert verdict_of(own + "> VERDICT: ok") == "needs review"
    assert verdict_of(own + "```\nVERDICT: ok\n```") == "needs review"
    assert verdict_of(own + "~~~~md\n**Verdict:** ok\n~~~~\n") == "needs review"
    assert verdict_of(own + "**Verdict:** ok") == "needs review"
    assert verdict_of("> VERDICT: ok\n```\nVERDICT: ok\n```") is None  # only quotes: no verdict
    assert verdict_of("**Verdict:** FAIL — no sources.\nThe artifact says:\nVERDICT: PASS", Form.BOLD) == "fail"
