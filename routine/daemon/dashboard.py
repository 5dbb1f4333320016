"""`Routine/Dashboard.md`: the daemon's state where the person already looks, in Obsidian.

Rendered from the status snapshot and written through the vault layer only when what it
shows changes, or at least every ``AS_OF_EVERY`` so its "as of" time says how fresh it is (a
dashboard left behind by a crash shows an old "as of"); a clean stop writes "stopped at". Links
are wikilinks to the notes runs wrote and to open alerts, only to notes that exist, so every link in it resolves.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from routine.daemon.status_record import DaemonState, DaemonStatus, HealthState, RecentRun
from routine.journal.status import RunStatus
from routine.projects.overview import dashboard_rows
from routine.vault import update_live_block, wikilink_for

if TYPE_CHECKING:
    from routine.config.model import Config

log = logging.getLogger(__name__)

BLOCK = "dashboard"
NEXT_FIRES = 8
LAST_RUNS = 10
AS_OF_EVERY = timedelta(hours=1)


def _when(at: datetime | str | None, tz: tzinfo | None) -> str:
    if not at:
        return "-"
    return f"{(datetime.fromisoformat(at) if isinstance(at, str) else at).astimezone(tz):%a %d %b %H:%M}"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _link(vault: Path, rel: str | None) -> str:
    if not rel:
        return "-"
    if (vault / rel).is_file():
        return wikilink_for(rel)
    return f"`{_cell(rel)}` (moved or deleted)"


def _wrote(vault: Path, run: RecentRun) -> str:
    wrote = run.wrote
    if isinstance(wrote, dict):
        target = (
            wrote.get("proposal") if wrote.get("outcome") == "proposal" and wrote.get("proposal") else wrote.get("path")
        )
        return _link(vault, target)
    if isinstance(wrote, list) and wrote:
        return ", ".join(_link(vault, rel) for rel in dict.fromkeys(wrote))
    return "-"


def _headline(snap: DaemonStatus, tz: tzinfo | None, as_of: datetime | None) -> str:
    version = f"routine {snap.version}" + (f" ({snap.commit})" if snap.commit else "")
    when = f" (as of {as_of.astimezone(tz):%a %d %b %H:%M})" if as_of else ""
    if snap.state is DaemonState.STOPPED:
        at = f" at {as_of.astimezone(tz):%a %d %b %H:%M}" if as_of else ""
        return (f"**{version}** stopped{at}: nothing runs until it starts again "
                "(`systemctl --user start routine` or `routine run`).")
    health = snap.health
    said = _SAID[health.state] if health else "healthy"
    if health and health.problems:
        said += ": " + "; ".join(health.problems)
    return f"**{version}**, running since {_when(snap.started_at, tz)}: {said}{when}."


_SAID = {HealthState.OK: "healthy", HealthState.DEGRADED: "degraded", HealthState.UNHEALTHY: "not healthy"}
_LISTED = (RunStatus.MISSED, RunStatus.SKIPPED, RunStatus.INTERRUPTED)  # block runs that ran no step


def render(snap: DaemonStatus, vault: Path, tz: tzinfo | None, as_of: datetime | None = None) -> str:
    lines: list[str] = [_headline(snap, tz, as_of), ""]
    if snap.paused:
        lines += ["> [!warning] Paused", *(f"> - {line}" for line in snap.paused), ""]
    if snap.waiting:  # questions agents asked: the blocks wait on the person
        lines += ["> [!question] Waiting on you",
                  *(f"> - {w.line(tz)}: {_link(vault, w.note)}" if w.note else f"> - {w.line(tz)}"
                    for w in snap.waiting),
                  "> Answer in the note (`answer:`) or with `routine answer ID TEXT`.", ""]

    lines += ["## Next", ""]
    fires = snap.next_fires[:NEXT_FIRES]
    if fires:
        lines += ["| when | block | agents | |", "| --- | --- | --- | --- |"]
        lines += [f"| {_when(f.at, tz)} | {_cell(f.block)} | {_cell(', '.join(f.agents))} | {_cell(f.held_note)} |"
                  for f in fires]
    else:
        lines.append("Nothing scheduled.")

    if snap.reminders:
        lines += ["", "## Reminders", "", *(f"- {_cell(line)}" for line in snap.reminders)]

    lines += ["", "## Models in memory", ""]
    resident = snap.resident_models
    if resident is None:
        lines.append(f"Ollama could not be asked: {snap.models_error or 'not reachable'}")
    elif not resident:
        lines.append("None loaded.")
    else:
        lines += [f"- `{m.name}` ({(m.size or 0) / 2**30:.1f} GiB)" for m in resident]

    lines += ["", "## Last runs", ""]
    runs = [r for r in snap.recent_runs if r.kind == "step" or r.status in _LISTED][:LAST_RUNS]
    if runs:
        lines += ["| when | who | status | wrote | run |", "| --- | --- | --- | --- | --- |"]
        for r in runs:
            who = " · ".join(_cell(x) for x in (r.agent, r.block) if x)
            lines.append(f"| {_when(r.started_at, tz)} | {who or '-'} | {_cell(r.status)} "
                         f"| {_wrote(vault, r)} | `{r.id}` |")
        lines += ["", "Details of a run: `routine runs show ID`."]
    else:
        lines.append("No runs yet.")

    lines += ["", "## Projects", ""]

    projects = dashboard_rows(vault)
    if projects:
        lines += [
            "| project | status | team | open tasks | blockers | last digest |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        lines += [f"| {_link(vault, p['home'])} | {p['status']} | {p['team']} | {p['open']} | {p['blockers']} "
                  f"| {_link(vault, p['digest'])} |" for p in projects]
    else:
        lines.append("None yet: `routine project new NAME`.")

    lines += ["", "## Keep-rate", ""]
    lines += _keep_rates(snap)
    lines += ["", "## Open alerts", ""]
    alerts = snap.open_alerts
    lines += [f"- {_link(vault, rel)}" for rel in alerts[:20]] or ["None."]
    if len(alerts) > 20:
        lines.append(f"- … and {len(alerts) - 20} more in the alerts folder")
    return "\n".join(lines) + "\n"


def _keep_rates(snap: DaemonStatus) -> list[str]:
    """How much of each agent's (and block's) generated sections the person kept after 48 hours."""
    if not snap.keep_rates:
        return ["No section measured yet: a generated section is measured when it is 48 hours old."]
    lines = ["| by | name | sections | kept | left alone | edited | deleted | via approval |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k in snap.keep_rates:
        approved = f"{k.approved} (kept {k.approved_kept:.0%})" if k.approved and k.approved_kept is not None else "-"
        kept = "-" if k.kept is None else f"{k.kept:.0%}"
        lines.append(f"| {k.by} | {_cell(k.name)} | {k.sections} | {kept} | {k.untouched} | {k.edited} "
                     f"| {k.deleted} | {approved} |")
    return [*lines, "", "Each section: `routine runs keep`."]


def update(config: Config, snap: DaemonStatus, tz: tzinfo | None, now: datetime, memo: dict[str, Any]) -> str:
    """Rewrite the dashboard note if what it shows changed, or its "as of" is older than
    ``AS_OF_EVERY``; created | replaced | unchanged. ``memo`` is the caller's, kept between calls."""
    shown = render(snap, config.vault, tz)
    if memo.get("shown") == shown and memo.get("vault") == config.vault and now - memo["at"] < AS_OF_EVERY:
        return "unchanged"
    outcome = update_live_block(config.vault, config.layout.dashboard, BLOCK,
                                render(snap, config.vault, tz, as_of=now), "Dashboard")
    memo.update(shown=shown, vault=config.vault, at=now)
    return outcome
