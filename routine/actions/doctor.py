"""`routine doctor`: check everything a run needs; print each problem with its fix."""

from __future__ import annotations

import argparse
import os
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

from routine import paths
from routine.config.loader import load_agents, load_config
from routine.errors import EXIT_JOB_FAILED, EXIT_USAGE, RoutineError
from routine.host import unitcheck
from routine.journal import Journal
from routine.models import providers
from routine.person import agenda
from routine.person.channels import answering
from routine.person.notifications import check_url
from routine.redact import redact_url
from routine.schedule.loader import load_schedules
from routine.statedb import set_aside_files
from routine.terminal.output import print_json
from routine.tools.mcp_client import connected, stop_all

if TYPE_CHECKING:
    from pathlib import Path

    from routine.config.model import AgentSpec, Config

# A failure here is a mistake in a file the person edits: exit 2, like `schedule validate`.
CONFIG_CHECKS = frozenset({"config", "agents", "schedules"})


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None
    warn: bool = False  # a missing extra: said clearly, but routine works without it (exit stays 0)


def run(args: argparse.Namespace) -> int:
    checks: list[Check] = []
    try:
        config = load_config(args.config)
        checks.append(Check("config", True, str(config.path)))
    except RoutineError as exc:
        checks.append(Check("config", False, str(exc), exc.fix))
        return _report(checks, args.json)

    checks.append(_vault_writable(config.vault))
    if config.vault.is_dir():  # else the vault is the one root cause: no cascade of agent errors after it
        agents, problems = load_agents(config)
        checks.append(Check("agents", not problems, f"{len(agents)} valid agent notes" if not problems else
                            "\n".join(map(str, problems)), None if not problems else "correct the lines listed"))
        checks.extend(_schedule_checks(config, agents))
        checks.extend(_sandbox_checks(agents))
    checks.extend(_server_checks(config))
    checks.extend(_calendar_checks(config))
    checks.extend(_notify_checks(config))
    checks.extend(_mcp_checks(config))
    checks.extend(_service_checks(config))
    checks.append(_state_check())
    return _report(checks, args.json)


def _service_checks(config: Config) -> list[Check]:
    """The installed unit lets through every host routine.yaml names (``routine.host.unitcheck``)."""
    gaps = unitcheck.gaps(config)
    if gaps:
        return [Check("service", False, gap.sentence(), gap.fix) for gap in gaps]
    return [Check("service", True, f"{unit.name} lets through every host routine.yaml names")
            for unit in unitcheck.installed()]


def _state_check() -> Check:
    """The journal opens (a damaged one is set aside); damaged state files kept aside are listed."""
    try:
        Journal().close()
    except Exception as exc:  # a full or read-only state disk: said, not a traceback
        return Check("state", False, f"the journal in {paths.state_dir()} cannot be opened ({exc})",
                     "free space on the state disk, or make the state dir writable")
    kept = set_aside_files(paths.state_dir())
    if not kept:
        return Check("state", True, f"the journal in {paths.state_dir()} is sound")
    return Check("state", False, "\n".join(item.sentence for item in kept),
                 "nothing is needed for routine to work; delete the files kept aside once you no longer need them",
                 warn=True)


def _vault_writable(vault: Path) -> Check:
    if not vault.is_dir():
        return Check("vault", False, f"{vault} does not exist (agents and schedules are checked once it does)",
                     f"run `routine init {vault}`, or correct `vault:` in the config")
    try:
        with tempfile.NamedTemporaryFile(dir=vault, prefix=".routine-doctor-"):
            pass
    except OSError as exc:
        return Check("vault", False, f"{vault} is not writable ({exc.strerror})", "fix the folder's permissions")
    return Check("vault", True, f"{vault} is writable")


def _schedule_checks(config: Config, agents: dict[str, AgentSpec]) -> list[Check]:
    try:
        schedules = load_schedules(config, agents)
    except RoutineError as exc:
        return [Check("schedules", False, str(exc), exc.fix)]
    checks = [Check("schedules", True, f"{len(schedules.blocks)} blocks, {len(schedules.triggers)} triggers")]
    unknown = [name for name in config.notify.ready if name not in schedules.blocks]
    if unknown:  # a push that can never come: said, not silently kept
        checks.append(Check("notify ready", False, f"notify.ready names {', '.join(unknown)}, which no block of the "
                            "schedules is, so no note is ever sent for it",
                            f"name a block in {config.path.name} (`routine schedule list` lists them)", warn=True))
    return checks


def _sandbox_checks(agents: dict[str, AgentSpec]) -> list[Check]:
    """run_command needs bubblewrap, and a kernel that lets it make namespaces."""
    users = sorted(a.name for a in agents.values() if "run_command" in a.tools)
    if not users:
        return []
    import shutil
    import subprocess

    who = ", ".join(users)
    if shutil.which("bwrap") is None:
        return [Check("sandbox", False, f"bubblewrap is not installed: run_command refuses every command of {who}; "
                      "everything else works", "install it: `sudo apt install bubblewrap`", warn=True)]
    probe = subprocess.run(["bwrap", "--unshare-all", "--ro-bind", "/", "/", "--", "true"], capture_output=True,
                           text=True, timeout=30)
    if probe.returncode != 0:
        return [Check("sandbox", False, f"bubblewrap cannot make a sandbox here: {probe.stderr.strip()[:200]}",
                      "allow unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1`) or run the "
                      "system unit (`routine service install`)")]
    return [Check("sandbox", True, f"bubblewrap works (for {who})")]


def _calendar_checks(config: Config) -> list[Check]:
    """Each calendar read and parsed now; the alert of one that reads again resolves here."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    now = datetime.now(ZoneInfo(config.zone_name()))
    return [Check(f"calendar {cal.name}", problem is None, problem or f"{redact_url(cal.source)} reads",
                  None if problem is None else agenda.fix_for(config, cal))
            for cal, problem in agenda.check(config, now)]


def _mcp_checks(config: Config) -> list[Check]:
    """Each MCP server started (in its sandbox) and its tools listed, then stopped; a tool that may
    change things is marked (it is a proposal for an agent with `approval: required`)."""
    checks = []
    try:
        for name, server in config.mcp_servers.items():
            try:
                tools = connected(server).tools
            except RoutineError as exc:
                checks.append(Check(f"mcp {name}", False, exc.message, exc.fix))
                continue
            listed = ", ".join(t.name + ("" if t.read_only else " (changes)") for t in tools) or "no tools"
            checks.append(Check(f"mcp {name}", True, f"started; {len(tools)} tools: {listed}"))
    finally:
        stop_all()
    return checks


def _notify_checks(config: Config) -> list[Check]:
    """Each notify URL: one Apprise knows, on a host that answers (nothing is sent)."""
    checks = []
    for url in config.notify.urls:
        problem = check_url(url)
        checks.append(Check(f"notify {redact_url(url)}", problem is None, problem or "known to Apprise and reachable",
                            None if problem is None else f"correct `notify.urls` in {config.path}, or start the "
                            "receiver; `routine notify test` sends a test message"))
    for channel in answering(config.notify):  # ntfy, Telegram: the server answers (the reader's host)
        problem = channel.check()
        checks.append(Check(f"notify {channel.name} (answers)", problem is None, problem or "the server answers",
                            None if problem is None else f"correct `notify.{channel.name}` in {config.path}; under "
                            "the service, run `routine service install` again once it is named there"))
    return checks


def _server_checks(config: Config) -> list[Check]:
    checks = []
    sizes: dict[str, int] = {}
    for host in config.managed_hosts:
        try:
            pulled = providers.pulled_sizes(host)
        except RoutineError as exc:
            checks.append(Check(f"ollama {host}", False, exc.message, exc.fix))
            continue
        checks.append(Check(f"ollama {host}", True, f"reachable, {len(pulled)} models pulled"))
        for alias in config.models.values():
            for dep in alias.deployments:
                if not dep.provider.manages_residency or dep.api_base != host:
                    continue
                ok = dep.served_name in pulled
                checks.append(
                    Check(
                        f"model {alias.name}",
                        ok,
                        dep.served_name + (" is pulled" if ok else " is not pulled"),
                        None if ok else f"run `ollama pull {dep.served_name}` on {host}",
                    )
                )
                sizes[alias.name] = pulled.get(dep.served_name, 0)
    checks.append(_memory_budget(config, sizes))
    return checks


def _memory_budget(config: Config, sizes: dict[str, int]) -> Check:
    total = _mem_total()
    biggest = sorted(sizes.values(), reverse=True)[: config.max_resident]
    # A loaded model takes roughly its file size plus KV cache; 1.2x is a fair margin.
    need = int(sum(biggest) * 1.2)
    if not total or not need:
        return Check("memory", True, "not measured (no model sizes known)")
    ok = need < total * 0.8
    return Check("memory", ok, f"{config.max_resident} largest models need ~{need / 2**30:.1f} GiB of "
                 f"{total / 2**30:.1f} GiB", None if ok else "lower `ollama.max_resident` or use smaller quantisations")


def _mem_total() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


def _report(checks: list[Check], as_json: bool) -> int:
    if as_json:
        print_json([c.__dict__ for c in checks])
    else:
        for c in checks:
            mark = "ok  " if c.ok else "WARN" if c.warn else "FAIL"
            first, *rest = c.detail.splitlines() or [""]
            print(f"{mark} {c.name}: {first}")
            for line in rest:
                print(f"       {line}")
            if c.fix and not c.ok:
                print(f"       fix: {c.fix}")
    failed = {c.name for c in checks if not (c.ok or c.warn)}
    return EXIT_USAGE if failed & CONFIG_CHECKS else EXIT_JOB_FAILED if failed else 0
