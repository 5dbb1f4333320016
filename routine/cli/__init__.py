"""The `routine` command: parse arguments, call one action, turn domain errors into messages.

Nothing heavy is imported here: each action module is imported only when its command runs,
so `routine --help` and the listing commands start fast and never load litellm, chromadb or torch.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from routine import __version__
from routine.cli import arguments
from routine.errors import EXIT_USAGE, RoutineError
from routine.host import logs
from routine.redact import redact_text
from routine.terminal.output import say

# command -> (module in routine.actions, help)
COMMANDS = {
    "init": ("init", "create the vault skeleton, the config file and the default schedules"),
    "doctor": ("doctor", "check Ollama, models, memory, vault and schedules; print each fix"),
    "run": ("run", "the daemon, in the foreground (what systemd starts)"),
    "status": ("status", "daemon state, queue, next fires, recent runs, open alerts"),
    "fire": ("fire", "run one agent (or schedule block) now and print where it wrote"),
    "pause": ("pause", "hold the schedule (or some blocks) until a date, for a while, or until `routine resume`"),
    "resume": ("pause", "end a pause (every pause, or the blocks named)"),
    "notify": ("notify", "notifications outside the vault: `notify test` sends one, `notify list` shows the last"),
    "schedule": ("schedule", "the schedule: blocks, their next fire times, validation"),
    "runs": ("runs", "run history: prompts, sources, output, timings, tokens, errors"),
    "approve": ("approve", "approve (or --reject) a proposal in Drafts/; without NOTE, list those waiting"),
    "models": ("models", "resident models, the coming day's load plan, token counts' errors, trials of another model, "
               "scores"),
    "service": ("service", "install the systemd unit (system, or --user) and start it"),
    "index": ("index", "bring the vault search index up to date (only what changed), or --rebuild it"),
    "search": ("search", "search the vault: ranked notes with heading and snippet"),
    "project": ("project", "projects: new, adopt, list, show, assign and unassign members and tasks"),
    "artifact": ("artifact", "artifacts: QA (promote to information product), new from the library, templates"),
    "agent": ("agent", "custom agents: new, list, show, assign, publish, install, export, import"),
    "library": ("library", "agent libraries: list them, or show what one holds"),
    "graph": ("graph", "the knowledge graph: a project, agent or workspace view, neighbours, paths"),
    "chat": ("chat", "talk with an agent in the terminal (answers streamed), or `chat new AGENT` for a chat note"),
    "ask": ("ask", "ask an agent one question; the answer streams; -c continues the last conversation"),
    "chats": ("chats", "conversations: every message, tool call and summary, from the journal"),
    "answer": ("answer", "answer a question an agent asked (its block waits for it); without ID, list those waiting"),
    "remind": ("remind", "a one-shot reminder at your local time (`remind TEXT --at WHEN`); --list, --snooze, --done"),
    "trigger": ("trigger", "an outside event: run the triggers declared for it (`\"on\": event`), with its payload"),
    "mcp": ("mcp", "serve routine over MCP (stdio) to another program, as one agent may (--as; default the Librarian)"),
    "trials": ("trials", "trials of another model and of changed agent notes: queued, running, done with the verdict"),
}

# `routine --help` lists the commands by what a person wants to do; a command in no group is listed
# under "More".
GROUPS = {
    "Every day": ("status", "fire", "ask", "chat", "chats", "remind", "runs", "pause", "resume", "search"),
    "Answer and approve": ("answer", "approve", "notify"),
    "Agents and projects": ("agent", "project", "artifact", "library", "graph"),
    "Models": ("models", "trials"),
    "Schedules and triggers": ("schedule", "trigger"),
    "Set up and fix": ("init", "doctor", "service", "run", "index", "mcp"),
}
MORE = """Also:
  memory         each agent keeps Agents/<Name>/Memory.md: dated lines learned from what you kept,
                 approved and told it in a chat ("Remember: ..."); edit or delete any line
  prompt trials  `routine agent try NAME --variant NOTE`: its real runs replayed with a changed note,
                 scored against the current one (`models try` does the same for a model)
  advice         a `change` block in Team Health or a step marked `advice: true` is tried, and lands in
                 Drafts/ as a proposal only if it did better
  chains         `after: {block: B, step: S}` in a schedule runs a review each time B's step wrote

Exit codes: 0 ok, 1 job failed, 2 usage or config error. `routine COMMAND --help` for more."""


def command_listing() -> str:
    """The commands, grouped by what a person wants to do (what `routine --help` shows)."""
    grouped = [name for names in GROUPS.values() for name in names]
    groups = {**GROUPS, "More": tuple(n for n in COMMANDS if n not in grouped)}
    blocks = []
    for title, names in groups.items():
        known = [n for n in names if n in COMMANDS]
        if known:
            blocks.append(f"{title}:\n" + "\n".join(_wrapped(n, COMMANDS[n][1]) for n in known))
    return "\n\n".join(blocks)


def _wrapped(name: str, text: str, width: int = 100) -> str:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width - 13:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join(f"  {name if i == 0 else '':<10} {part}" for i, part in enumerate([*lines, line]))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only``, that command's arguments alone (what a run of it
    needs: the two dozen others cost a CLI call tens of milliseconds for nothing)."""
    parser = argparse.ArgumentParser(
        prog="routine",
        description="A local team of LLM agents that works your day in your Obsidian vault.",
        epilog=f"{command_listing()}\n\n{MORE}" if only is None else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"routine {__version__}")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $ROUTINE_CONFIG or "
                        "$XDG_CONFIG_HOME/routine/routine.yaml)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help="one of those listed below")
    for name, (module, help_text) in COMMANDS.items():
        if only is not None and name != only:
            continue
        p = sub.add_parser(name, description=help_text[0].upper() + help_text[1:] + ".")  # listed by group
        getattr(arguments, name.replace("-", "_"))(p)
        p.set_defaults(_module=module)
    return parser


def _command_in(argv: list[str]) -> str | None:
    """The command ``argv`` names, when it names one after the global options; else None."""
    skip = False
    for arg in argv:
        if skip or arg == "--debug" or arg.startswith("--config="):
            skip = False
            continue
        if arg == "--config":
            skip = True
            continue
        return arg if arg in COMMANDS else None
    return None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(_command_in(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    if not hasattr(args, "json"):  # a subcommand's --json has no default (so `CMD --json SUB` holds)
        args.json = False
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    _setup_logging(args.debug, one_shot=args.command != "run")
    try:
        action = importlib.import_module(f"routine.actions.{args._module}")
        return action.run(args) or 0
    except RoutineError as exc:
        if args.debug:
            raise

        say(f"routine: {redact_text(str(exc))}", sys.stderr)  # wrapped to a terminal's width
        return exc.exit_code
    except KeyboardInterrupt:
        print("routine: interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `routine runs list | head`: the reader left; end quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        _send_notifications()


def _send_notifications() -> None:
    """Messages the command queued (an alert, a proposal) go out before it exits: Apprise cannot
    send once the interpreter is shutting down. Nothing to wait for when none were queued."""
    sent = sys.modules.get("routine.person.notifications")
    if sent is not None:
        sent.flush()


def _setup_logging(debug: bool, one_shot: bool) -> None:
    level = (
        logging.DEBUG
        if debug
        else getattr(logging, os.environ.get("ROUTINE_LOG_LEVEL", "WARNING").upper(), logging.WARNING)
    )
    handler = logs.setup(level)
    # The command says how its run ended, once: its run's lines stay off a terminal unless asked
    # for (ROUTINE_LOG_LEVEL); under journald they always go to the journal.
    if one_shot and not debug and "ROUTINE_LOG_LEVEL" not in os.environ and not logs.stderr_is_journal():
        handler.addFilter(logs.RunLinesToTheJournal())
    if not debug:
        for noisy in ("LiteLLM", "litellm", "httpx", "httpcore"):
            logging.getLogger(noisy).setLevel(logging.WARNING if level <= logging.WARNING else level)
