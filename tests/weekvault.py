"""A realistic vault and a simulated week of the shipped schedules, for tests and bench/context.py.

The vault: OKRs with numbers (and the template's commented example), a Project Map, three
projects, nine earlier daily notes written by a person (plans, checked boxes, logs, digests),
Inbox notes, research, samples of the person's voice. The week: every shipped block at its
cron time, in order, Monday to Sunday and the next Monday morning, through the real runner
(in process, on an injected clock) and the stand-in Ollama; the person ticks boxes and writes
a line or two between blocks. Each model request is checked as it was sent.
"""

from __future__ import annotations

import random
import re
import textwrap
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from chat_tokens import family_of, request_tokens

PROJECTS = {
    "Atlas": ("supplier portal", "KR 1.1", ["supplier deadline", "API contract", "pricing page"]),
    "Beacon": ("home-lab assistant", "KR 2.1", ["install script", "build-log post", "Jetson benchmarks"]),
    "Cedar": ("garden irrigation", "KR 3.2", ["valve order", "moisture sensors", "rain barrel"]),
}
CONTACTS = {"Atlas": "Jürgen Weiß (supplier side)", "Beacon": "Ines Duarte (first outside tester)",
            "Cedar": "Tomás Ortega (irrigation shop)"}
TZ = ZoneInfo("Europe/Berlin")


def _w(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def make_vault(vault: Path, monday: date, days_before: int = 9, seed: int = 7) -> None:
    """Write the realistic vault's notes (over what ``routine init`` made)."""
    rng = random.Random(seed)
    okrs = (vault / "Plans" / "OKRs.md").read_text()
    okrs = okrs.replace("period:\n", "period: 2026-Q4\n", 1)
    real = _w("""
        ## Objective 1: Launch the Atlas supplier portal to paying customers
        Why it matters: the consulting contract renews only if Atlas is live by January.
        - KR 1.1: 3 suppliers submit orders through the portal — current 1 / target 3 — by 2026-12-15
        - KR 1.2: p95 page load under 800 ms — current 1,240 ms / target 800 ms — by 2026-12-01
        - KR 1.3: €12,400 MRR — current €4,150 / target €12,400 — by 2026-12-31

        ## Objective 2: Make Beacon installable by strangers
        - KR 2.1: a fresh install takes under 30 minutes — current 2 h / target 30 min — by 2026-12-20
        - KR 2.2: publish 4 build-log posts — current 1 / target 4 — by 2026-12-31

        ## Objective 3: Keep the garden alive through winter with no manual watering
        - KR 3.1: zero days of manual watering in December — current 5 / target 0
        - KR 3.2: irrigation controller runs unattended for 14 days — current 3 / target 14
        """)
    okrs = re.sub(r"## Objective 1:.*\Z", real, okrs, flags=re.S)
    (vault / "Plans" / "OKRs.md").write_text(okrs)
    project_map = ["---", "tags: [plan]", "---", "# Project Map", ""]
    for name, (what, kr, topics) in PROJECTS.items():
        project_map += [f"## [[Projects/{name}/{name}|{name}]] — {what}", f"Serves {kr}. Next: {topics[0]}.",
                        f"Waiting on: {topics[1]}. Later: {topics[2]}.", ""]
        folder = vault / "Projects" / name
        folder.mkdir(parents=True, exist_ok=True)
        body = [f"---\ntype: project\nstatus: active\ngoal: {what}\n---", f"# {name}", "",
                f"The {what}. Serves [[Plans/OKRs|{kr}]]. Contact: {CONTACTS[name]}.", "", "## Tasks"]
        body += [f"- [{'x' if i == 0 else ' '}] {t} 📅 2026-12-{10 + i:02d}" for i, t in enumerate(topics)]
        body += ["", "## Decisions"] + [f"- {d}" for d in rng.sample([
            "Use Postgres, not SQLite, for multi-user", "Ship without SSO first", "Buy valves from the local shop",
            "Write the install script in bash", "Defer the dashboard redesign"], 2)]
        body += ["", "## Notes", _lorem(rng, 6, topics)]
        (folder / f"{name}.md").write_text("\n".join(body) + "\n")
        (folder / f"{name} Meeting Notes.md").write_text(f"# {name} meeting notes\n\n{_lorem(rng, 10, topics)}\n")
    (vault / "Plans" / "Project Map.md").write_text("\n".join(project_map) + "\n")
    (vault / "Plans" / "My Voice.md").write_text(_w("""
        # My Voice

        ## Sample 1
        Long day. The supplier call went sideways for ten minutes and then, weirdly, fine —
        they just wanted someone to own the deadline. So I own it now. Fine.

        ## Sample 2
        Tiny win: the install script ran clean on the spare Jetson. Forty minutes, not two hours.
        Still not thirty. Tomorrow I cut the model download out of the critical path.
        """))
    for i in range(days_before, 0, -1):
        day = monday - timedelta(days=i)
        (vault / "Daily" / f"{day.isoformat()}.md").write_text(_daily(day, rng))
    for i, topic in enumerate(["Idea: a Slack bot for Atlas orders", "Article on solar valves",
                               "Call notes with Jürgen", "Try Ollama on the NAS"]):
        (vault / "Inbox" / f"{topic.split(':')[0]} {i}.md").write_text(f"# {topic}\n\n{_lorem(rng, 3, [topic])}\n")
    for topic in ("Supplier onboarding", "Jetson power modes", "Drip irrigation"):
        (vault / "Research" / f"{topic}.md").write_text(f"# {topic}\n\n## Findings\n{_lorem(rng, 8, [topic])}\n")


def _daily(day: date, rng: random.Random) -> str:
    name, (what, kr, topics) = rng.choice(list(PROJECTS.items()))
    body = [f"# {day:%A %d %B %Y}", "", "## Plan"]
    for hour, task in zip((8, 10, 13, 14, 15), rng.sample(topics + ["admin and messages", "review PRs"], 5)):
        body.append(f"- [{'x' if rng.random() < 0.6 else ' '}] {hour:02d}:00 {task} ([[Projects/{name}/{name}]])")
    body += [
        "",
        "## Log",
        f"Worked on {what}. " + _lorem(rng, 3, topics),
        "",
        "## Evening Log",
        f"Good progress on {topics[0]}; {topics[1]} still blocked on a reply. " + _lorem(rng, 2, topics),
        "",
        "## Dream Seeds",
        f"1. What would make {topics[2]} unnecessary? ([[Projects/{name}/{name}]])",
        "",
        "## Digest",
        f"**Planned** {topics[0]}, {topics[1]} — **Done** {topics[0]} — **Decided** none — "
        f"**Blocked** {topics[1]} (waiting on supplier) [[Projects/{name}/{name}]]",
    ]
    return "\n".join(body) + "\n"


def _lorem(rng: random.Random, sentences: int, topics: list[str], grounded_in: str | None = None) -> str:
    """Filler sentences. ``grounded_in``: a good model's, whose dates and amounts come from that text."""
    verbs = ["checked", "rewrote", "measured", "asked about", "sketched", "postponed", "tested", "priced"]
    objs = ["the numbers", "the draft", "the edge cases", "two options", "the schedule", "the budget of €3,250"]
    dates = sorted(set(re.findall(r"\b2026-\d{2}-\d{2}\b", grounded_in or ""))) or ["today"]
    if grounded_in is not None:
        objs = [o for o in objs if "€" not in o or o.split()[-1] in grounded_in]

    def when() -> str:
        return f"2026-11-{rng.randint(1, 28):02d}" if grounded_in is None else rng.choice(dates)

    return " ".join(f"{rng.choice(verbs).capitalize()} {rng.choice(objs)} for {rng.choice(topics)} on {when()}."
                    for _ in range(sentences))


def model_reply(model: str, messages: list) -> str | dict:
    """A plausible section: 120–220 words citing the notes the request carried, its dates and
    amounts taken from what the request carried (a good reply is grounded), and where it was shown
    key results or a project's contact, paraphrased as a model writes (``paraphrases``). A step with tools
    first calls one (the whole vault's list_notes where it may, else read_note of the OKRs), as a
    model following its agent prompt does."""
    user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
    offered = re.search(r"You may first use your tools \(([^)]*)\)", user)
    if offered and not any(m.get("role") == "tool" for m in messages):
        if "list_notes" in offered.group(1).split(", "):
            return {"tool_calls": [{"name": "list_notes", "arguments": {"folder": "", "limit": 100}}]}
        return {"tool_calls": [{"name": "read_note", "arguments": {"path": "Plans/OKRs.md"}}]}
    links = re.findall(r"^## (\[\[[^\]]+\]\])", user, re.M)[:4] or ["[[Plans/OKRs]]"]
    rng = random.Random(len(user))
    shown = "\n".join(m.get("content") or "" for m in messages)
    worked = paraphrases(shown, rng)  # in place of two of the filler paragraphs: a section as long as before
    lines = [f"**{label}** — " + _lorem(rng, 2, ["the beta", "the supplier portal"], shown) + f" {rng.choice(links)}"
             for label in ("Top OKRs", "Progress", "Drift", "Focus")[:2 if worked else 4]]
    lines += [f"- [ ] {h}:00 {rng.choice(['supplier call', 'install script', 'valve order'])} {rng.choice(links)}"
              for h in (9, 10, 13, 15)]
    lines += worked
    if "`VERDICT: ok`" in user:  # a reviewer asked for a verdict ends with one, as its task says
        lines.append("VERDICT: ok")
    return "\n".join(lines)


_KR = re.compile(r"(KR \d\.\d):[^\n]*?current (€?)([\d,]+)\s?(ms|h|min)? / target €?([\d,]+)\s?(ms|h|min)?"
                 r"(?:[^\n]*?by (\d{4}-\d{2}-\d{2}))?")
_TODAY = re.compile(r"Today is \w+, (\d{4}-\d{2}-\d{2})")
_CONTACT = re.compile(r"Contact: ([A-ZÀ-Þ][\w'-]+) [A-ZÀ-Þ][\w'-]+")
_SECONDS = {"ms": 0.001, "": 1, "min": 60, "h": 3600}


def paraphrases(shown: str, rng: random.Random) -> list[str]:
    """What a 7B model writes about the key results and people it was shown: a percent of target, what
    is left, a unit converted, days until the due date in words, a first name — grounded, not quoted."""
    today = _TODAY.search(shown)
    shown = re.sub(r"%%.*?%%", " ", shown, flags=re.S)  # the OKR template's example is a comment, not a goal
    out, said = [], set()
    for m in _KR.findall(shown):
        if m[0] in said:
            continue
        said.add(m[0])
        kr, cur, unit, tgt = m[0], int(m[2].replace(",", "")), m[3], int(m[4].replace(",", ""))
        money, target_unit, due = m[1], m[5], m[6]
        forms = []
        if unit == target_unit:
            gap = f"{money}{abs(tgt - cur):,}{' ' + unit if unit else ''}"
            forms.append(f"**{kr}**: {gap} to go." if cur < tgt else f"**{kr}** is {gap} over the goal.")
            if 0 < cur < tgt:
                forms.append(f"**{kr}** stands at {round(100 * cur / tgt)}% of target "
                             f"({money}{cur:,} of {money}{tgt:,}).")
            if unit == "ms":
                forms.append(f"**{kr}**: p95 is {cur / 1000:.1f} s against {tgt / 1000:.1f} s.")
        elif unit and target_unit:
            cut = (cur * _SECONDS[unit] - tgt * _SECONDS[target_unit]) / 60
            forms.append(f"**{kr}**: {cut:.0f} minutes still to cut from the install.")
        if due and today:
            when, now = date.fromisoformat(due), date.fromisoformat(today[1])
            forms.append(f"**{kr}** is due {when:%A}, {when:%b} {when.day} — {(when - now).days} days from today.")
        out.append(rng.choice(forms))
    out = rng.sample(out, min(3, len(out)))  # a section of 120–220 words mentions a few, not every one
    names = sorted(set(_CONTACT.findall(shown)))
    if names:
        out.append(f"- [ ] Ask {rng.choice(names)} what is still open.")
    return out


def fires(schedules, day: date) -> list[tuple[datetime, object]]:
    start = datetime.combine(day, time(0), TZ)
    out = []
    for block in schedules.blocks.values():
        out += [(t, block) for t in block.cron.between(start - timedelta(seconds=1), start + timedelta(days=1), TZ)]
    return sorted(out, key=lambda x: (x[0], x[1].id))


def person_edits(vault: Path, when: datetime, rng: random.Random) -> None:
    """What the person does between blocks: ticks a box, writes a line in today's note."""
    note = vault / "Daily" / f"{when.date().isoformat()}.md"
    if not note.exists():
        return
    text = note.read_text()
    if "- [ ]" in text and rng.random() < 0.5:
        text = text.replace("- [ ]", "- [x]", 1)
    if when.hour in (11, 17):
        text += f"\nNote to self at {when:%H:%M}: the supplier answered, Atlas unblocked. [[Projects/Atlas/Atlas]]\n"
    note.write_text(text)


@dataclass
class StepSeen:
    """One step of the simulated week: what was sent and what the step was owed."""

    when: datetime
    block: str
    agent: str
    requests: list          # request bodies as the stand-in received them
    prior: list[str]        # earlier outputs this step declared as inputs
    dropped: list           # the journal's record of what was left out
    target_label: str
    target_section: str | None
    status: str
    grounding: dict | None = None  # the journal's grounding check of the reply (routine/vault/grounding.py)
    output: str = ""               # what the step answered (written to its target, or proposed)


def simulate(config, server, days: list[date], seed: int = 11) -> list[StepSeen]:
    """Run every shipped block of ``days`` in time order, in process, on an injected clock."""
    from routine.config.loader import load_agents
    from routine.flows.step_setup import STEP_SETUP
    from routine.journal import Journal
    from routine.runner.block import run_block
    from routine.runner.events import StepStarted
    from routine.runner.step import Runner
    from routine.schedule.loader import load_schedules
    from routine.vault import wikilink_for

    agents, _ = load_agents(config)
    schedules = load_schedules(config, agents)
    journal = Journal()
    now = [datetime.combine(days[0], time(0), TZ)]
    marks: list[tuple[str, int]] = []
    runner = Runner(config, journal, clock=lambda: now[0],
                    on_event=lambda event: marks.append((event.agent, len(server.requests)))
                    if isinstance(event, StepStarted) else None, setup=STEP_SETUP)
    rng = random.Random(seed)
    seen: list[StepSeen] = []
    try:
        for day in days:
            for when, block in fires(schedules, day):
                person_edits(config.vault, when, rng)
                now[0] = when
                marks.clear()
                outcome = run_block(runner, block, agents, trigger="schedule", slot=when.isoformat())
                ends = [m[1] for m in marks[1:]] + [len(server.requests)]
                outputs = {}
                for i, (step, result) in enumerate(zip(block.steps, outcome.steps)):
                    bodies = [b for b in server.requests[marks[i][1]:ends[i]] if b.get("messages")]
                    run = journal.get(result.run_id).as_dict() if result.run_id else {}
                    target = _target(step.write, when)
                    prior = [outputs[name] for name in re.findall(r"steps\.(\w+)\.output", " ".join(step.inputs))
                             if name in outputs]
                    seen.append(StepSeen(when, block.id, step.agent, bodies, prior, run.get("dropped") or [],
                                         wikilink_for(target[0]), target[1], result.status,
                                         run.get("grounding"), result.output or ""))
                    outputs[step.agent] = result.output
    finally:
        runner.close()
        journal.close()
    return seen


def _target(write, when: datetime) -> tuple[str, str | None]:
    from routine.templating import date_vars, render

    variables = date_vars(when)
    note = render(write.append or write.note, variables, "target")
    return note, (render(write.section, variables, "target") if write.section else None)


def tokens_of(body: dict) -> tuple[int, int]:
    """A request's tokens by its own model family's template and tokenizer, and its limit (num_ctx less
    the answer's reserve)."""
    opts = body.get("options") or {}
    limit = int(opts.get("num_ctx", 8192)) - int(opts.get("num_predict", 1024))
    return request_tokens(body["model"], body["messages"], body.get("tools")), limit


def _is_draft(step: StepSeen, label: str, reason: str) -> bool:
    """Whether a left-out piece is (or holds) the draft the step rewrites: the section it writes, given
    on its own, or the whole note it writes."""
    if step.target_section is None:
        return label.startswith(step.target_label) and "no room" in reason
    return label == f"{step.target_label} (§ {step.target_section})" or (
        label.startswith(step.target_label) and step.target_section in reason)


def problems_of(step: StepSeen) -> list[str]:
    """What a person would call wrong with what this step sent; empty when it was right."""
    out = []
    for body in step.requests:
        count, limit = tokens_of(body)
        if count > limit:
            out.append(f"{count} tokens by {family_of(body['model']).title()}'s tokenizer, over the {limit} allowed")
        # What routine composed (a tool's result is what the model asked for, and may repeat it).
        text = "\n".join(m.get("content") or "" for m in body["messages"] if m["role"] in ("system", "user"))
        if "%%" in text:
            out.append("an Obsidian comment reached the prompt")
        for prior in step.prior:
            if " ".join(prior.split())[:200] not in " ".join(text.split()):
                out.append("an earlier step's output did not arrive")
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if len(p.strip()) >= 80]
        twice = {p for p in paragraphs if paragraphs.count(p) > 1}
        if twice:
            out.append(f"sent twice: {next(iter(twice))[:60]}…")
    for d in step.dropped:
        label, reason = d.get("label", ""), d.get("reason", "")
        if label.startswith("Output of the"):
            out.append(f"dropped a handoff: {label}")
        if _is_draft(step, label, reason):
            out.append(f"dropped the target draft: {label} ({reason})")
        if step.agent == "planner" and label.startswith("[[Plans/Project Map]]"):
            out.append("dropped the Project Map")
    return out
