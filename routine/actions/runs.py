"""`routine runs [list|show ID|retry ID|keep]`: the run history from the journal."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, TypeAlias

from routine.actions.keep import keep
from routine.actions.retry import retry
from routine.config.loader import zone_name_of
from routine.errors import UsageError
from routine.journal import Journal
from routine.journal.runs import RunRecord, TranscriptEntry
from routine.journal.status import outcome
from routine.journal.token_samples import TokenSamples
from routine.models.calibration import error_percent
from routine.terminal.output import Clock, print_json, print_table

if TYPE_CHECKING:
    from routine.jsonvalue import Parsed

LIST_COLUMNS = ["id", "status", "agent", "block", "trigger", "model", "started", "seconds", "wrote"]


def run(args: argparse.Namespace) -> int:
    journal = Journal()
    try:
        if getattr(args, "runs_command", None) == "show":
            return _show(journal, args.run_id, args.json, Clock.named(zone_name_of(args.config)))
        if getattr(args, "runs_command", None) == "retry":
            return retry(args, journal, find_run(journal, args.run_id))
        if getattr(args, "runs_command", None) == "keep":
            return keep(args, journal)
        return _list(journal, getattr(args, "limit", 20), args.json, Clock.named(zone_name_of(args.config)))
    finally:
        journal.close()


def _list(journal: Journal, limit: int, as_json: bool, clock: Clock) -> int:
    runs = [r.as_dict() for r in journal.recent(limit)]
    if as_json:
        print_json(runs)
        return 0
    if not runs:
        print("No runs yet. Try `routine fire strategist`.")
        return 0
    rows = []
    for r in runs:
        wrote = r.get("wrote") or {}
        rows.append({**r, "model": (r.get("model") or "").split("/")[-1],
                     "started": clock.show(r.get("started_at")),
                     "seconds": None if r.get("duration_ms") is None else f"{r['duration_ms'] / 1000:.1f}",
                     "wrote": _wrote_cell(wrote),
                     "status": outcome(r["status"], r.get("details"), r.get("error"))})
    print_table(rows, LIST_COLUMNS, {"started": clock.label("started")}, keep=("id", "status", "started"),
                spare=("trigger", "seconds", "model", "block"))
    return 0


# A run's `wrote` as journaled: a note's path, a write's record ({"path", ...}), or a block's, step by step.
WroteValue: TypeAlias = "str | Parsed | list[WroteValue] | None"


def _wrote_cell(wrote: WroteValue) -> str | None:
    """One note's path, or a block's notes joined (each once): never a Python list's repr."""
    return ", ".join(wrote_paths(wrote)) or None


def wrote_paths(wrote: WroteValue) -> list[str]:
    """The notes a run (or a block, step by step) wrote, each once, in the order written."""
    if isinstance(wrote, dict):
        return [wrote["path"]] if wrote.get("path") else []
    if isinstance(wrote, list):
        return list(dict.fromkeys(p for w in wrote for p in wrote_paths(w)))
    return [wrote] if wrote else []


def find_run(journal: Journal, run_id: str) -> RunRecord:
    """The run with this id or unique prefix; an ambiguous prefix or no match is a usage error."""
    matches = journal.matching(run_id)
    if len(matches) > 1:
        raise UsageError(f"{run_id!r} is the start of {len(matches)} run ids ({', '.join(matches[:5])}"
                         f"{', …' if len(matches) > 5 else ''}).", "type more of the id.")
    run = journal.get(run_id)
    if run is None:
        raise UsageError(f"There is no run {run_id!r}.", "see `routine runs list` for run ids.")
    return run


def _show(journal: Journal, run_id: str, as_json: bool, clock: Clock) -> int:
    row = find_run(journal, run_id).as_dict()
    counts = _token_counts(journal, row["id"])
    if as_json:
        print_json({**row, "token_counts": counts, "steps": [c.as_dict() for c in journal.children(row["id"])]})
        return 0
    shown = {**row, "status": outcome(row["status"], row.get("details")),
             "started_at": clock.show(row.get("started_at"), "%Y-%m-%d %H:%M:%S %Z"),
             "ended_at": row.get("ended_at") and clock.show(row["ended_at"], "%Y-%m-%d %H:%M:%S %Z")}
    for key in ("id", "status", "agent", "block", "trigger", "slot", "model", "started_at", "ended_at",
                "duration_ms", "load_duration_ms", "tokens_in", "tokens_out"):
        if shown.get(key) is not None:
            print(f"{key + ':':18}{shown[key]}")
    held = (row.get("details") or {}).get("held")
    if held:  # a pause held it: since when (it fired when the pause ended)
        print(f"{'held:':18}since {clock.show(held, '%Y-%m-%d %H:%M %Z')}, fired when the pause ended")
    if row.get("error"):
        print(f"\nError:\n  {row['error']}")
    if row.get("task"):
        print(f"\nTask:\n{_indent(row['task'])}")
    if row.get("sources"):
        print("\nSources:\n" + "\n".join(f"  {s}" for s in row["sources"]))
    if row.get("dropped"):
        print("\nLeft out of context:\n" + "\n".join(f"  {d['label']}: {d['reason']}" for d in row["dropped"]))
    if row.get("wrote"):
        wrote = row["wrote"]
        lines = [wrote.get("message") or wrote.get("path")] if isinstance(wrote, dict) else wrote_paths(wrote)
        print("\nWrote:\n" + "\n".join(f"  {line}" for line in lines))
    if row.get("prompt"):
        print("\nPrompt:")
        for message in row["prompt"]:
            print(f"  --- {message['role']} ---\n{_indent(message['content'], 4)}")
    if row.get("log"):
        print("\n" + "\n".join(transcript_lines(row["log"])))
    if row.get("output"):
        print(f"\nOutput:\n{_indent(row['output'])}")
    if row.get("metrics"):
        print("\nMetrics:")
        for line in _metric_lines(row["metrics"]):
            print(f"  {line}")
    if counts:
        print("\nToken counts (each request as counted before it was sent, against what the server reported):")
        for c in counts:
            print(f"  {c['counted']} counted, {c['reported']} by the server ({c['error_pct']:+.1f}%), {c['counter']}")
    if row.get("details"):
        print(f"\nDetails:\n{_indent(json.dumps(row['details'], indent=2, ensure_ascii=False))}")
    for child in journal.children(row["id"]):
        attempt = (child.details or {}).get("attempt") if isinstance(child.details, dict) else None
        print(
            f"\nStep {child.step}: {child.agent} {child.status} ({child.id})"
            + (f", attempt {attempt}" if attempt else "")
        )
    return 0


def _token_counts(journal: Journal, run_id: str) -> list[dict[str, object]]:
    return [{"model": s.model, "counter": s.counter, "counted": s.counted, "reported": s.reported,
             "error_pct": round(error_percent(s.counted, s.reported), 1)}
            for s in TokenSamples(journal.db).of_run(run_id) if s.counted]


_METRIC_LABELS = [
    ("duration_s", "duration", "{} s"), ("model_s", "model call", "{} s"), ("load_duration_ms", "model load", "{} ms"),
    ("tokens_in", "tokens in", "{}"), ("tokens_out", "tokens out", "{}"), ("tokens_per_s", "tokens/s", "{}"),
    ("cpu_s", "CPU (this run)", "{} s"), ("process_rss_mb", "daemon RSS", "{} MiB"),
    ("process_max_rss_mb", "daemon peak RSS", "{} MiB"), ("mem_available_mb", "memory available", "{} MiB"),
    ("mem_total_mb", "memory total", "{} MiB"), ("swap_used_mb", "swap in use", "{} MiB"),
]


def _metric_lines(metrics: Parsed) -> list[str]:
    lines = [f"{label + ':':18}{fmt.format(metrics[key])}" for key, label, fmt in _METRIC_LABELS
             if metrics.get(key) is not None]
    tegra = metrics.get("tegrastats") or {}
    if tegra:
        parts = [f"{k}={v}" for k, v in tegra.items() if not isinstance(v, dict)]
        parts += [f"{k}={v}" for group in ("temp_c", "power_mw") for k, v in (tegra.get(group) or {}).items()]
        lines.append(f"{'tegrastats:':18}{' '.join(parts)}")
    version = metrics.get("version")
    if version:
        lines.append(f"{'routine:':18}{version}" + (f" ({metrics['commit']})" if metrics.get("commit") else ""))
    return lines


def _indent(text: str, n: int = 2) -> str:
    return "\n".join(" " * n + line for line in str(text).splitlines())


def transcript_lines(entries: list[TranscriptEntry]) -> list[str]:
    """A tool-using run, turn by turn: what the model said or asked for, and what each tool gave."""
    turns = sum(e["type"] == "model" for e in entries)
    calls = [e for e in entries if e["type"] == "tool"]
    refused = sum(bool(e.get("refused")) for e in calls)
    lines = [f"Transcript ({turns} model turn{'s' * (turns != 1)}, {len(calls)} tool call{'s' * (len(calls) != 1)}"
             f"{f', {refused} refused' if refused else ''}):"]
    for e in entries:
        if e["type"] == "model":
            asked = ", ".join(
                f"{c['name']}({_args(c['arguments'])})" + (" [written as text]" if c.get("written_as_text") else "")
                for c in e.get("calls") or []
            )
            said = (e.get("content") or "").strip()
            lines.append(
                f"  {e['turn']}. model: " + (f"calls {asked}" if asked else f"answers ({len(said)} characters)")
            )
            if said and asked:
                lines.append(_indent(_first_lines(said), 6))
        elif e["type"] == "elided":
            lines.append(f"     (an earlier {e.get('tool')} result {e.get('reason', 'was left out')})")
        else:
            mark = "REFUSED " if e.get("refused") else ""
            first = (str(e.get("error") or e.get("result") or "").strip().splitlines() or [""])[0]
            lines.append(f"     {mark}{e['name']} → {first}  ({e.get('ms', 0)} ms)")
            body = e.get("result") or ""
            if body and "\n" in body.strip():
                lines.append(_indent(_first_lines(body.split("\n", 1)[1], 4), 8))
    return lines


def _args(arguments: object) -> str:
    if isinstance(arguments, dict):
        return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)[:80]}" for k, v in arguments.items())
    return repr(arguments)[:120]


def _first_lines(text: str, n: int = 3) -> str:
    lines = str(text).strip().splitlines()
    return "\n".join(lines[:n]) + (f"\n[… {len(lines) - n} more lines]" if len(lines) > n else "")
