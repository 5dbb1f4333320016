"""The arguments of each command, one function per command (import-free on purpose)."""

from __future__ import annotations

import argparse


def _json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def init(p: argparse.ArgumentParser) -> None:
    p.add_argument("vault", nargs="?", default=None, metavar="VAULT",
                   help="the vault folder (default: the config's vault, else ~/Vault)")


def doctor(p: argparse.ArgumentParser) -> None:
    _json(p)


def fire(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="AGENT|BLOCK", help="an agent name (e.g. strategist) or a schedule block")
    p.add_argument("--task", help="what to do this time, instead of the agent's default task")
    p.add_argument("--dry-run", action="store_true",
                   help="print the exact messages and their sources; call no model, write nothing")
    _json(p)


def runs(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="runs_command", metavar="list|show")
    ls = sub.add_parser("list", help="recent runs, newest first")
    ls.add_argument("-n", "--limit", type=int, default=20, help="how many (default 20)")
    _json(ls)
    show = sub.add_parser("show", help="one run in full: prompt, sources, output, timings, errors")
    show.add_argument("run_id", metavar="ID", help="a run id, or a unique prefix of one")
    _json(show)
    _json(p)


def schedule(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="schedule_command", metavar="list|next|validate")
    _json(sub.add_parser("list", help="the blocks and triggers of every schedule file"))
    nxt = sub.add_parser("next", help="the next N fire times, in local time, DST shifts marked")
    nxt.add_argument("n", nargs="?", type=int, default=10, metavar="N", help="how many (default 10)")
    _json(nxt)
    _json(sub.add_parser("validate", help="check every schedule file; print every error at once"))
    _json(p)


def run(p: argparse.ArgumentParser) -> None:
    pass


def status(p: argparse.ArgumentParser) -> None:
    _json(p)


def models(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="models_command", metavar="ps|plan")
    _json(sub.add_parser("ps", help="resident models: who loaded each, when it expires"))
    plan = sub.add_parser("plan", help="the coming day's model loads: routine's plan against Ollama alone")
    plan.add_argument("--hours", type=int, default=24, help="how far ahead (default 24)")
    _json(plan)
    _json(p)


def approve(p: argparse.ArgumentParser) -> None:
    p.add_argument("note", nargs="?", metavar="NOTE", help="the proposal (path or name); without it, list those waiting")
    p.add_argument("--reject", action="store_true", help="reject it instead (it is archived, nothing is applied)")
    p.add_argument("--force", action="store_true",
                   help="apply a proposal in conflict over the text there now (that text is kept in the archive)")
    _json(p)


def service(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="service_command", metavar="install")
    install = sub.add_parser("install", help="write the systemd unit with this machine's paths, enable and start it")
    install.add_argument("--user", action="store_true",
                         help="a user unit in your own service manager (default: the system unit routine@YOU, "
                              "which needs root; without it the commands to run are printed)")
    install.add_argument("--print", action="store_true", help="print the unit and the commands; change nothing")


def index(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rebuild", action="store_true",
                   help="forget the index and embed the whole vault again (otherwise only what changed)")
    _json(p)


def search(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="what to look for, in your own words")
    p.add_argument("--agent", metavar="NAME", help="only notes this agent may read (its `reads:` scopes)")
    p.add_argument("-k", type=int, default=6, metavar="N", help="how many notes (default 6)")
    _json(p)
