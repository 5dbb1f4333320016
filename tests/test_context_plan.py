"""The pieces behind what a step sees, in process: counting, reply checks, note outlines, the
context plan under a small window, input forms and date variables."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from routine.config.model import AgentSpec, ModelAlias, WriteSpec
from routine.models import reply
from routine.models.calibration import Calibration
from routine.models.tokens import Estimate, MistralTokens, count_request, mistral_available
from routine.runner import context, prompt
from routine.runner.inputs import Kind, expand
from routine.templating import date_vars
from routine.vault.outline import compact_properties, sections, strip_comments

REPO = Path(__file__).resolve().parent.parent
BERLIN = ZoneInfo("Europe/Berlin")


def vault_texts() -> list[str]:
    texts = [p.read_text() for p in (REPO / "vault_templates").rglob("*.md")]
    texts += [p.read_text() for p in (REPO / "routine").rglob("*.py")][:30]  # code: denser than prose
    texts.append("- [x] 08:00–09:00 KR 1.1: €12,400 by 2026-12-31 (47% → 60%), "
                 "Jürgen 13:30 [[Daily/2026-11-20]]")
    return texts


@pytest.mark.skipif(not mistral_available(), reason="mistral-common is not installed")
def test_the_uncalibrated_estimate_never_counts_below_mistrals_tokenizer():
    exact, estimate = MistralTokens(), Estimate()
    for text in vault_texts():
        assert estimate.text(text) >= exact.text(text), text[:80]


def test_calibration_learns_a_denser_tokenizer_from_what_the_server_reports():
    cal = Calibration()
    messages = [{"role": "user", "content": "plain words about the beta launch " * 40}]
    before = count_request(cal.counter("m", None), messages)
    for _ in range(3):  # the server says each request cost half as much again as we counted
        cal.record("m", None, messages, None, int(before * 1.5))
    assert count_request(cal.counter("m", None), messages) >= before * 1.4
    # A cached prefix makes a sample look cheap: it never lowers the count below the honest ones.
    cal.record("m", None, messages, None, before // 3)
    assert count_request(cal.counter("m", None), messages) >= before * 1.4


@pytest.mark.parametrize("text,finish,problem", [
    ("Half an answ", "length", reply.ReplyProblem.CUT_OFF),
    ("  \n ", "stop", reply.ReplyProblem.EMPTY),
    ("<|im_end|><|im_start|>" * 30, "stop", reply.ReplyProblem.CONTROL_TOKENS),
    ("Fine start <|im_start|>user and then the template leaks", "stop", reply.ReplyProblem.CONTROL_TOKENS),
    ("- the same line again\n" * 60, "stop", reply.ReplyProblem.REPETITION),
    ("ab" * 400, "stop", reply.ReplyProblem.REPETITION),
    ("**Focus today**\n1. Ship the beta [[Plans/OKRs]]\n<|im_end|>", "stop", None),
    ("\n".join(f"| {i} | task {i * 7} | KR 1.{i % 3} |" for i in range(40)), "stop", None),
])
def test_reply_checks(text, finish, problem):
    assert reply.problem_with(text, finish) is problem


def test_an_outline_drops_comments_and_markers_and_keeps_properties_short():
    body = ("%% routine:begin plan agent=planner sha=abc %%\n## Plan\n- [ ] ship\n%% routine:end plan %%\n"
            "%%\nEXAMPLE goal\n%%\n## Log\nWorked. ```%% kept in code %%```\n")
    cleaned = strip_comments(body)
    assert "routine:" not in cleaned and "EXAMPLE" not in cleaned
    assert [s.heading for s in sections(cleaned)] == ["Plan", "Log"]
    props = compact_properties({"period": "2026-Q4", "agent": "planner", "tags": ["plan", "routine/planner"],
                                "run": "x", "status": "active"})
    assert props == "period: 2026-Q4 · tags: plan · status: active"


def agent(tmp_path: Path, **kw) -> AgentSpec:
    base = dict(name="planner", role="", model="general", reads=("**",), writes=("Daily/**",), approval="none",
                tools=(), grounding=("[[Project Map]]",), write=None, task="Plan the day", system_prompt="You plan.",
                source="Agents/Planner.md")
    return AgentSpec(**{**base, **kw})


def long_day(n: int) -> str:
    parts = [f"## {h}\n" + f"{h} text. " * n for h in ("Morning Log", "Plan", "Notes", "Evening Log", "Dream Seeds")]
    return "\n".join(parts)


def test_under_a_small_window_the_handoff_the_draft_and_grounding_stay_and_long_notes_give_sections(tmp_path):
    """The section the step rewrites (its draft) stays; the rest of the note it writes ranks as an
    input, after those it asked for: yesterday's long note gives its relevant section, not its head."""
    (tmp_path / "Plans").mkdir()
    (tmp_path / "Daily").mkdir()
    (tmp_path / "Plans" / "Project Map.md").write_text("# Map\n- Atlas: supplier portal\n")
    (tmp_path / "Daily" / "2026-11-24.md").write_text("## Plan\n- [ ] draft from last evening\n" + long_day(30))
    (tmp_path / "Daily" / "2026-11-23.md").write_text(long_day(120))
    variables = {**date_vars(datetime(2026, 11, 24, 7, 30, tzinfo=BERLIN)), "task": "Plan today; read the evening log",
                 "steps": {"strategist": {"output": "Focus: ship the beta. " * 10}}}
    spec = agent(tmp_path)
    gathered = context.gather(tmp_path, spec, ("{{ steps.strategist.output }}", "Daily/{{ yesterday }}.md"),
                              variables, "test", target=context.Target("Daily/2026-11-24.md", "Plan"),
                              prior={"strategist": "Focus: ship the beta. " * 10})
    alias = ModelAlias(name="general", model="ollama_chat/m", num_ctx=1500, num_predict=256)
    built = prompt.build(spec, alias, variables["task"], gathered, variables, "Write the plan.", Estimate())
    user = built.messages[1]["content"]
    assert built.counted <= built.limit == 1500 - 256
    assert "Focus: ship the beta." in user                     # the handoff
    assert "draft from last evening" in user                   # the target's current draft
    assert "Atlas: supplier portal" in user                    # the grounding
    assert "Evening Log text." in user                         # the relevant section of a long input...
    assert "Notes text." not in user                           # ...not its head
    assert any("sections left out" in d["reason"] for d in built.dropped)
    assert "Left out for length" in user


def test_a_section_already_sent_as_a_handoff_is_not_sent_again(tmp_path):
    (tmp_path / "Daily").mkdir()
    output = "**Top OKRs** — KR 1.1 is at 1 of 3 suppliers, on track for December."
    (tmp_path / "Daily" / "2026-11-24.md").write_text(
        f"## Alignment\n%% routine:begin alignment agent=strategist sha=x %%\n{output}\n%% routine:end alignment %%\n")
    variables = {**date_vars(datetime(2026, 11, 24, 7, 30, tzinfo=BERLIN)), "task": "t",
                 "steps": {"strategist": {"output": output}}}
    gathered = context.gather(tmp_path, agent(tmp_path, grounding=()), ("{{ steps.strategist.output }}",
                              "Daily/{{ today }}.md"), variables, "test", prior={"strategist": output})
    rendered = "\n".join(it.render() for it in gathered.items)
    assert rendered.count("KR 1.1 is at 1 of 3") == 1


@pytest.mark.parametrize("inputs", [
    ("Projects/Atlas.md#Decisions", "Projects/Atlas.md#Risks"),     # the other section is missing
    ("Projects/Atlas.md#Risks", "Projects/Atlas.md#Decisions"),     # ... asked first
    ("Projects/Atlas.md#Risks", "Projects/Atlas.md#Open"),          # two missing: the whole note once
    ("Projects/Atlas.md#Decisions", "Projects/./Atlas.md#decisions"),  # one section, two spellings
    ("Projects/Atlas.md#Log", "Projects/Atlas.md#Decisions"),       # a section inside one given
    ("Projects/Atlas.md#Decisions", "Projects/Atlas.md#Log"),       # ... given first
], ids=["missing-second", "missing-first", "both-missing", "two-spellings", "inside", "inside-first"])
def test_a_section_asked_twice_arrives_once(tmp_path, inputs):
    (tmp_path / "Projects").mkdir()
    (tmp_path / "Projects" / "Atlas.md").write_text(
        "# Atlas\nThe supplier portal.\n## Log\nMonday: the API contract.\n"
        "### Decisions\n- Use Postgres, not SQLite, for multi-user\n## Notes\nPricing page next.\n")
    variables = {**date_vars(datetime(2026, 11, 24, 7, 30, tzinfo=BERLIN)), "task": "Review Atlas"}
    gathered = context.gather(tmp_path, agent(tmp_path, grounding=()), inputs, variables, "test")
    alias = ModelAlias(name="general", model="ollama_chat/m", num_ctx=4096, num_predict=256)
    user = prompt.build(agent(tmp_path), alias, "Review Atlas", gathered, variables, "Write.", Estimate()).messages[1]
    # Once where a section holding it is asked for; two missing sections give the note's relevant
    # sections (its top, which names Atlas), not its whole text.
    asked = any(name in "".join(inputs).lower() for name in ("#decisions", "#log"))
    assert user["content"].count("Use Postgres, not SQLite") == (1 if asked else 0), user["content"]
    if "Projects/Atlas.md#Risks" in inputs:  # the person is told the section is not there
        assert "no section 'Risks': its relevant sections" in user["content"]  # the top, which names Atlas


def test_a_section_the_task_names_in_the_plural_is_kept_first(tmp_path):
    """A weekly review that looks for patterns "in the postmortems" keeps the day's Postmortem when the
    note does not fit whole, not the later handoff sections."""
    (tmp_path / "Daily").mkdir()
    (tmp_path / "Daily" / "2026-11-27.md").write_text("\n".join(
        f"## {h}\n" + f"{h} of the day, in detail. " * 40 for h in ("Plan", "Postmortem", "Risk Review", "Digest")))
    task = "Systemic review: patterns that showed up more than once in the postmortems."
    variables = {**date_vars(datetime(2026, 11, 27, 17, 15, tzinfo=BERLIN)), "task": task}
    gathered = context.gather(tmp_path, agent(tmp_path, grounding=()), ("Daily/{{ today }}.md",), variables, "test")
    alias = ModelAlias(name="analyst", model="ollama_chat/m", num_ctx=1100, num_predict=256)
    built = prompt.build(agent(tmp_path), alias, task, gathered, variables, "Write.", Estimate())
    user = built.messages[1]["content"]
    assert "Postmortem of the day" in user
    assert "Plan of the day" not in user and any("sections left out" in d["reason"] for d in built.dropped)


def test_input_forms_and_the_dates_a_person_means():
    monday = date_vars(datetime(2026, 11, 30, 7, 30, tzinfo=BERLIN))
    assert monday["last_workday"] == "2026-11-27" and monday["yesterday"] == "2026-11-29"
    friday = date_vars(datetime(2026, 11, 27, 16, 30, tzinfo=BERLIN))
    assert friday["week_so_far"] == ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26"]
    assert friday["last_week"][0] == "2026-11-16" and friday["last_iso_week"] == "2026-W47"
    forms = expand("Daily/{{ week_so_far }}.md#Digest", friday, "t")
    assert [(f.kind, f.path, f.section) for f in forms][0] == (Kind.NOTE, "Daily/2026-11-23.md", "Digest")
    assert len(forms) == 4
    assert expand("links: Daily/{{ today }}.md#Plan", friday, "t")[0].kind is Kind.LINKS
    assert expand("journal: 7d", friday, "t")[0].days == 7
    assert expand("Inbox/*.md", friday, "t")[0].kind is Kind.GLOB


def test_every_shipped_agent_declares_a_bare_fire_context_and_the_write_target_it_reads():
    from routine.vault import split_frontmatter

    for note in (REPO / "vault_templates" / "Agents").glob("*.md"):
        meta, _ = split_frontmatter(note.read_text())
        assert meta.get("inputs"), note.name
        assert json.dumps(meta["inputs"])  # plain strings, as in schedules
    _ = WriteSpec


def test_a_bare_fire_of_every_builtin_agent_is_grounded(tmp_path, monkeypatch, capsys):
    """`routine fire AGENT --dry-run` on a lived-in vault: every agent gets the notes it works from."""
    from datetime import date, timedelta

    from routine.cli import main
    from weekvault import make_vault

    for key, sub in (("ROUTINE_CONFIG", "config/routine.yaml"), ("ROUTINE_STATE_DIR", "state"),
                     ("ROUTINE_RUNTIME_DIR", "run")):
        monkeypatch.setenv(key, str(tmp_path / sub))
    vault = tmp_path / "Vault"
    assert main(["init", str(vault)]) == 0
    make_vault(vault, date.today() + timedelta(days=1))  # nine days of notes, today's among them
    today = f"Daily/{date.today().isoformat()}.md"
    capsys.readouterr()
    expected = {"strategist": today, "planner": "Plans/Project Map.md", "critic": "Inbox/", "guardian": "Projects/",
                "builder": "Projects/", "research": "Projects/", "librarian": "Inbox/", "scribe": "Plans/My Voice.md"}
    for name, must in expected.items():
        assert main(["fire", name, "--dry-run", "--json"]) == 0
        sources = json.loads(capsys.readouterr().out)["sources"]
        assert len(sources) >= 2 and any(s.startswith(must) for s in sources), (name, sources)


def test_an_input_form_is_checked_where_it_is_written_by_the_rule_it_is_expanded_with():
    """One declaration (``config/input_forms``): `schedule validate` and a run say the same."""
    from routine.config.input_forms import problem
    from routine.errors import UsageError

    assert problem("journal: lots", "the block x") == (
        "`journal: lots` in the block x is not a number of days.", "write `journal: 7d` (the last 7 days).")
    try:
        expand("journal: lots", date_vars(datetime(2026, 11, 27, 16, 30, tzinfo=BERLIN)), "the block x")
    except UsageError as exc:
        assert (exc.message, exc.fix) == problem("journal: lots", "the block x")
    else:
        raise AssertionError("`journal: lots` was expanded")
    assert [(f.kind, f.days) for f in expand(" journal: 14d ", {}, "t")] == [(Kind.JOURNAL, 14)]


def test_a_paragraph_two_notes_share_is_sent_once(tmp_path):
    """Two agent notes that share their QA rules (the Critic's and the Guardian's) are both given,
    the shared paragraph once: the second says where it is."""
    (tmp_path / "Agents").mkdir()
    rules = ("## When the task is a QA review of an artifact\n\nThe task gives the artifact and the review note; "
             "read both whole before you judge, and name each finding with the line it is about.\n")
    for name, own in (("Critic", "Find the risks in a plan."), ("Guardian", "Keep the person's words safe.")):
        (tmp_path / "Agents" / f"{name}.md").write_text(f"# {name}\n\n{own}\n\n{rules}")
    variables = {**date_vars(datetime(2026, 11, 29, 18, 0, tzinfo=BERLIN)), "task": "Propose a capability"}
    gathered = context.gather(tmp_path, agent(tmp_path, grounding=()), ("Agents/*.md",), variables, "test")
    alias = ModelAlias(name="general", model="ollama_chat/m", num_ctx=4096, num_predict=256)
    user = prompt.build(agent(tmp_path), alias, "Propose a capability", gathered, variables, "Write.",
                        Estimate()).messages[1]["content"]
    assert user.count("read both whole before you judge") == 1, user
    assert "Find the risks in a plan." in user and "Keep the person's words safe." in user
    first = "Critic" if user.index("# Critic") < user.index("# Guardian") else "Guardian"
    assert f"[the same paragraph as in [[Agents/{first}]], above]" in user, user
