"""routine's own journal as a short report: what the Watcher (the Guardian's team-health block)
reads to tell the person how the team is doing.

Failures and their reasons, runs that lost context for length, replies that were rejected,
proposals (a section the person had rewritten, or an approval asked for) and how they were
decided, per agent the share of replies held for unsupported claims and the claims most often
unsupported, the prompt trials of changes to agent notes (the Watcher's advice, tried) and
what came of them, and speed per model. Markdown, compact: it goes into a prompt.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from datetime import datetime, timedelta

from routine.journal.keep import KeepRate, KeepRates
from routine.journal.prompt_trials import PromptTrials
from routine.journal.stamps import utc_millis
from routine.jsonvalue import Parsed
from routine.vault.writer import Why

MAX_LISTED = 8


def team_report(db: sqlite3.Connection, now: datetime, days: int) -> str:
    since = utc_millis(now - timedelta(days=days))
    runs = [dict(r) for r in db.execute(
        "SELECT id, agent, block, status, error, dropped, tokens_out, duration_ms, load_duration_ms, model, details,"
        " wrote, grounding"
        " FROM runs WHERE kind='step' AND started_at >= ? ORDER BY started_at", (since,))]
    if not runs:
        return f"No runs in the last {days} days."
    parts = [_totals(runs, days), _failures(runs), _dropped(runs), _proposals(db, runs, since),
             grounding_report(runs), keep_report(db, now, days), PromptTrials(db).report(since), _speed(runs)]
    return "\n\n".join(p for p in parts if p)


def _totals(runs: list[Parsed], days: int) -> str:
    by_status = Counter(r["status"] for r in runs)
    line = ", ".join(f"{n} {status}" for status, n in by_status.most_common())
    agents = Counter(r["agent"] for r in runs)
    return (f"**Runs, last {days} days**: {len(runs)} ({line}).\n"
            f"By agent: {', '.join(f'{a} {n}' for a, n in agents.most_common())}.")


def _failures(runs: list[Parsed]) -> str:
    failed = [r for r in runs if r["status"] in ("failed", "refused", "interrupted", "max-iterations", "timeout")]
    if not failed:
        return "**Failures**: none."
    reasons = Counter(f"{r['agent']}: {(r['error'] or '').split(' Fix:')[0][:160]}" for r in failed)
    lines = [f"- {reason} (×{n})" if n > 1 else f"- {reason}" for reason, n in reasons.most_common(MAX_LISTED)]
    rejected = sum(1 for r in failed if "so nothing was written" in (r["error"] or ""))
    head = f"**Failures**: {len(failed)}" + (f", of which {rejected} rejected replies (cut off, empty or garbage)"
                                             if rejected else "")
    return head + "\n" + "\n".join(lines)


def _dropped(runs: list[Parsed]) -> str:
    lost = []
    for r in runs:
        try:
            dropped = json.loads(r["dropped"] or "[]")
        except ValueError:
            continue
        if dropped:
            lost.append((r, dropped))
    if not lost:
        return "**Context**: every run got all of its context."
    labels = Counter(d.get("label", "?") for _, dropped in lost for d in dropped)
    worst = ", ".join(f"{label} (×{n})" for label, n in labels.most_common(5))
    return f"**Context left out for length** in {len(lost)} runs; most often: {worst}."


# Why a run wrote a proposal (``runs.wrote.why``, routine.vault.writer.Why), as the report says it.
_WHY = {Why.PERSON_EDITED.value: "the person had rewritten the section",
        Why.PERSON_OWNS.value: "the person's own text was there", Why.APPROVAL.value: "approval required",
        Why.HELD.value: "claims not supported by its sources"}


def _proposals(db: sqlite3.Connection, runs: list[Parsed], since: str) -> str:
    made = [r for r in runs if r["status"] == "proposal"]
    decided = Counter(f"{d['decision']} → {d['outcome']}" for d in db.execute(
        "SELECT decision, outcome FROM decisions WHERE at >= ?", (since,)))
    if not made and not decided:
        return "**Proposals**: none."
    whys = Counter(_WHY.get(_why(r), "other") for r in made)
    split = " (" + ", ".join(f"{n}: {why}" for why, n in whys.most_common()) + ")" if whys else ""
    tail = "; decided: " + ", ".join(f"{k} {n}" for k, n in decided.most_common()) if decided else ""
    return f"**Proposals**: {len(made)} runs wrote a proposal instead of the note{split}{tail}."


def _why(run: Parsed) -> str:
    wrote = _json(run["wrote"] or "{}")
    return str(wrote.get("why") or "") if isinstance(wrote, dict) else ""


def grounding_report(runs: list[Parsed]) -> str:
    """Per agent, the share of its checked replies held as proposals for unsupported claims, how many
    were asked again, and the claims most often unsupported (``runs.grounding``, routine/runner/claims.py)."""
    checked: dict[str, list[Parsed]] = {}
    for r in runs:
        record = _json(r.get("grounding"))
        if isinstance(record, dict) and record.get("strictness") != "off":
            checked.setdefault(r["agent"] or "?", []).append(record)
    if not checked:
        return ""
    lines = []
    for agent, records in sorted(checked.items()):
        held = sum(1 for g in records if g.get("held"))
        again = sum(1 for g in records if g.get("asked_again"))
        claims = Counter(claim for g in records for claim in {  # each run's once, first answer or second
            f"{f.get('claim')} ({f.get('kind')})" for f in (g.get("findings") or []) + (g.get("findings_after") or [])
            if isinstance(f, dict)})
        line = f"- {agent}: {held} of {len(records)} replies held ({held / len(records):.0%}), {again} asked again"
        if claims:
            line += "; most often unsupported: " + ", ".join(
                f"{claim} ×{n}" if n > 1 else claim for claim, n in claims.most_common(3))
        lines.append(line)
    return "**Grounding** (replies held as proposals for claims their notes do not support):\n" + "\n".join(lines)


def _json(value: object) -> object:
    try:
        return json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return None


def keep_report(db: sqlite3.Connection, now: datetime, days: int) -> str:
    """Keep-rate per agent and per block of the sections written in the last ``days`` days and
    measured (48 h old, or written again); those that went through approval told apart."""
    keep = KeepRates(db)
    rates = keep.rates(now - timedelta(days=days))
    waiting = keep.pending()
    if not rates:
        return "**Keep-rate**: no section measured yet" + (f" ({waiting} waiting for 48 h)." if waiting else ".")
    lines = [f"- {r.by} {r.name}: {_kept(r)}" for r in rates]
    head = "**Keep-rate** (how much of each generated section the person kept after 48 h)"
    return head + (f", {waiting} more waiting" if waiting else "") + ":\n" + "\n".join(lines)


def _kept(rate: KeepRate) -> str:
    said = []
    if rate.kept is not None:
        said.append(f"kept {rate.kept:.0%} of {rate.sections} sections it wrote ({rate.untouched} left alone, "
                    f"{rate.edited} rewritten by the person in part or whole, {rate.deleted} deleted)")
    if rate.approved_kept is not None:
        said.append(f"{rate.approved} went through approval, kept {rate.approved_kept:.0%}")
    return "; ".join(said)


def _speed(runs: list[Parsed]) -> str:
    per_model: dict[str, list[float]] = {}
    for r in runs:
        if r["tokens_out"] and r["duration_ms"]:
            gen_ms = max(1, r["duration_ms"] - (r["load_duration_ms"] or 0))
            per_model.setdefault(r["model"] or "?", []).append(r["tokens_out"] * 1000 / gen_ms)
    if not per_model:
        return ""
    lines = [f"- {model}: {sorted(v)[len(v) // 2]:.1f} tokens/s (median of {len(v)})" for model, v in per_model.items()]
    return "**Speed**:\n" + "\n".join(lines)
