"""The arguments of each command, one function per command (import-free on purpose)."""

from __future__ import annotations

import argparse

from routine.config.behaviours import DEFAULT as DEFAULT_BEHAVIOUR
from routine.config.behaviours import NAMES as BEHAVIOURS


def _json(p: argparse.ArgumentParser, parent: bool = False) -> None:
    """`--json`, accepted anywhere on its command line: `runs --json list` and `runs list --json` alike.

    A subcommand's own `--json` has no default, so it never overwrites the parent's."""
    p.add_argument("--json", action="store_true", default=False if parent else argparse.SUPPRESS,
                   help="print JSON instead of a table")


def _limit(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is too few: give 1 or more")
    return n


def init(p: argparse.ArgumentParser) -> None:
    p.add_argument("vault", nargs="?", default=None, metavar="VAULT",
                   help="the vault folder (default: the config's vault, else ~/Vault)")


def doctor(p: argparse.ArgumentParser) -> None:
    _json(p, parent=True)


def fire(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="AGENT|BLOCK", help="an agent name (e.g. strategist) or a schedule block")
    p.add_argument("--task", help="what to do this time, instead of the agent's default task")
    p.add_argument("--dry-run", action="store_true",
                   help="print the exact messages and their sources; call no model, write nothing")
    _model(p, "this run")
    p.add_argument("--write", action="store_true",
                   help="with --model: write as the agent would (default: the run on another model is a proposal)")
    _quiet(p)
    _json(p, parent=True)


def _quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on the terminal (it shows only there, never when piped or with --json)")


def _model(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--model", metavar="ALIAS", default=None,
                   help=f"answer {what} with another model alias from routine.yaml (journaled as such)")


def runs(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="runs_command", metavar="list|show|retry|keep")
    ls = sub.add_parser("list", help="recent runs, newest first")
    ls.add_argument("-n", "--limit", type=_limit, default=20, help="how many (default 20)")
    _json(ls)
    show = sub.add_parser("show", help="one run in full: prompt, sources, output, timings, errors")
    show.add_argument("run_id", metavar="ID", help="a run id, or a unique prefix of one")
    _json(show)
    retry = sub.add_parser("retry", help="resume a failed or interrupted block run from its failed step, "
                                         "reusing the earlier steps' outputs")
    retry.add_argument("run_id", metavar="ID", help="the block run (or one of its steps): an id or a unique prefix")
    _json(retry)
    keep = sub.add_parser("keep", help="how much of each generated section the person kept after 48 hours, "
                                       "per agent and per block")
    keep.add_argument("--days", type=_limit, default=7, help="sections written in the last N days (default 7)")
    _json(keep)
    _json(p, parent=True)


def schedule(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="schedule_command", metavar="list|next|validate")
    _json(sub.add_parser("list", help="the blocks and triggers of every schedule file"))
    nxt = sub.add_parser("next", help="the next N fire times, in local time, DST shifts marked")
    nxt.add_argument("n", nargs="?", type=_limit, default=10, metavar="N", help="how many (default 10)")
    _json(nxt)
    _json(sub.add_parser("validate", help="check every schedule file; print every error at once"))
    _json(p, parent=True)


def run(p: argparse.ArgumentParser) -> None:
    pass


def pause(p: argparse.ArgumentParser) -> None:
    p.add_argument("blocks", nargs="*", metavar="BLOCK", help="blocks (or triggers) to pause; none: everything")
    p.add_argument("--until", metavar="DATE|DURATION|DAY", help="when the pause ends: 2026-12-27, 2026-12-27T08:00, "
                   "3d, 12h, tomorrow, or a weekday such as monday (as that day begins); default: until "
                   "`routine resume`")
    _json(p, parent=True)


def notify(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="notify_command", metavar="test|list")
    _json(sub.add_parser("test", help="send a test message to every `notify.urls` and say what each answered"))
    ls = sub.add_parser("list", help="the last messages: sent, held for quiet hours, failed; with counts")
    ls.add_argument("--limit", type=_limit, default=20, help="how many (default 20)")
    _json(ls)
    _json(p, parent=True)


def resume(p: argparse.ArgumentParser) -> None:
    p.add_argument("blocks", nargs="*", metavar="BLOCK", help="blocks to resume; none: every pause")
    _json(p, parent=True)


def status(p: argparse.ArgumentParser) -> None:
    _json(p, parent=True)


def models(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="models_command", metavar="ps|plan|tokens|try|scores")
    _json(sub.add_parser("ps", help="resident models: who loaded each, when it expires"))
    plan = sub.add_parser("plan", help="the coming day's model loads: routine's plan against Ollama alone")
    plan.add_argument("--hours", type=int, default=24, help="how far ahead (default 24)")
    _json(plan)
    _json(sub.add_parser("tokens", help="per alias: how its prompts are counted, and the count's error against "
                                        "what the server reported"))
    tried = sub.add_parser("try", help="replay real runs' requests on a candidate model; its answers are judged "
                                       "beside the originals, nothing is written")
    tried.add_argument("candidate", metavar="CANDIDATE", help="the model alias to try (from routine.yaml)")
    tried.add_argument("--against", metavar="ALIAS", help="only runs made with this alias")
    tried.add_argument("--runs", nargs="+", default=["yesterday"], metavar="yesterday|today|ID",
                       help="which runs: yesterday's step runs (default), today's, or run ids")
    tried.add_argument("--now", action="store_true",
                       help="run the trials now, not in the trials window (through the daemon when it runs)")
    _json(tried)
    _json(sub.add_parser("scores", help="per model and agent: checks passed and figures; writes Routine/Models.md"))
    _json(p, parent=True)


def approve(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "note", nargs="?", metavar="NOTE", help="the proposal (path or name); without it, list those waiting"
    )
    p.add_argument("--reject", action="store_true", help="reject it instead (it is archived, nothing is applied)")
    p.add_argument("--force", action="store_true",
                   help="apply a proposal in conflict over the text there now (that text is kept in the archive)")
    _json(p, parent=True)


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
    _quiet(p)
    _json(p, parent=True)


def search(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="what to look for, in your own words")
    p.add_argument("--agent", metavar="NAME", help="only notes this agent may read (its `reads:` scopes)")
    p.add_argument("-k", type=int, default=6, metavar="N", help="how many notes (default 6)")
    _json(p, parent=True)


def project(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="project_command", metavar="new|adopt|list|show|assign|unassign")
    new = sub.add_parser("new", help="make Projects/NAME/ with its home note and its project-manager agent")
    new.add_argument("name", metavar="NAME")
    new.add_argument("--goal", help="what the project is for (the home note's goal)")
    _json(new)
    adopt = sub.add_parser(
        "adopt", help="make a folder in Projects/ made by hand a project (adds only what is missing)"
    )
    adopt.add_argument("name", metavar="NAME")
    _json(adopt)
    _json(sub.add_parser("list", help="every project: status, manager, members, open tasks, next fire"))
    show = sub.add_parser("show", help="members and behaviours, open tasks, artifacts, last digest, next fires")
    show.add_argument("name", metavar="NAME")
    _json(show)
    assign = sub.add_parser("assign", help="add a member (a person or an agent), or assign a task to one")
    assign.add_argument("name", metavar="NAME", help="the project")
    assign.add_argument("member", metavar="MEMBER", help="an agent (e.g. builder) or a person's name")
    assign.add_argument("--task", help="a task line to add (or reassign) in the home note")
    assign.add_argument("--as", dest="behaviour", metavar="BEHAVIOUR",
                        help=f"an agent's behaviour: {', '.join(BEHAVIOURS)} (default: {DEFAULT_BEHAVIOUR.value})")
    assign.add_argument("--role", help="the member's role in the project")
    assign.add_argument("--due", metavar="YYYY-MM-DD", help="the task's due date")
    _json(assign)
    unassign = sub.add_parser("unassign", help="take a member off the project, or unassign a task (--task)")
    unassign.add_argument("name", metavar="NAME")
    unassign.add_argument("member", metavar="MEMBER")
    unassign.add_argument("--task", help="the task line's text")
    _json(unassign)
    _json(p)


def artifact(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="artifact_command", metavar="qa|new|templates")
    qa = sub.add_parser("qa", help="review an artifact; a pass promotes it to information product")
    qa.add_argument("note", metavar="NOTE")
    qa.add_argument("--by", action="append", metavar="AGENT", help="a reviewer (default: critic and guardian)")
    _json(qa)
    new = sub.add_parser("new", help="a cognitive artifact from the library, in a project's case file")
    new.add_argument("project", metavar="PROJECT")
    new.add_argument("template", metavar="TEMPLATE", help="e.g. Pre-mortem, Decision record, Interview guide")
    new.add_argument("--owner", help="the owner's note name (a member)")
    _json(new)
    _json(sub.add_parser("templates", help="the artifact library"))


def _assignment(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--project", metavar="P", help="a project (Projects/P/P.md): its members and behaviours")
    where.add_argument("--task", metavar="NOTE", help="a note holding the task line(s)")


def agent(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="agent_command", metavar="new|list|show|try|assign|unassign|reassign|publish|install|"
                           "export|import")
    new = sub.add_parser("new", help="a custom agent grounded in notes (artifacts)")
    new.add_argument("name", metavar="NAME", help="its name, also its note's: Agents/NAME.md")
    new.add_argument("--from", dest="sources", nargs="+", required=True, metavar="NOTE",
                     help="the notes that ground it (paths or note names)")
    new.add_argument("--model", metavar="ALIAS", help="a model alias from routine.yaml (default: general)")
    new.add_argument("--tools", nargs="+", default=[], metavar="TOOL",
                     help="the tools it may use (default: read_note list_notes search_notes)")
    new.add_argument("--behaviour", choices=BEHAVIOURS)
    new.add_argument("--role", help="one line: what it is for")
    new.add_argument(
        "--locked", action="store_true", help="hide its grounding's content from listings and other agents"
    )
    _json(sub.add_parser("list", help="every agent: role, model, tools, custom or built in, locked"))
    show = sub.add_parser("show", help="one agent: role, model, scopes, tools, grounding, assignments, last runs")
    show.add_argument("name", metavar="NAME")
    _json(show)
    tried = sub.add_parser("try", help="replay its real runs with a variant of its note (queued for the trials "
                                       "window while the daemon runs); proposed when better")
    tried.add_argument("name", metavar="NAME")
    tried.add_argument("--variant", required=True, metavar="NOTE",
                       help="a copy of its agent note with the instructions changed (e.g. Drafts/Planner v2.md)")
    tried.add_argument("--runs", nargs="+", default=["yesterday"], metavar="yesterday|today|ID",
                       help="which of its runs: yesterday's (default), today's, or run ids")
    tried.add_argument("--now", action="store_true",
                       help="try it now, not in the trials window (through the daemon when it runs)")
    _json(tried)
    for verb, text in (("assign", "assign it to a project or a task"), ("unassign", "take it off a project or task")):
        a = sub.add_parser(verb, help=text)
        a.add_argument("name", metavar="NAME")
        _assignment(a)
        if verb == "assign":
            a.add_argument("--item", metavar="TEXT", help="which task line (words of it); added when none matches")
            a.add_argument("--behaviour", choices=BEHAVIOURS)
    re_ = sub.add_parser("reassign", help="hand its place in a project or task to another agent")
    re_.add_argument("name", metavar="NAME")
    re_.add_argument("--to", required=True, metavar="OTHER", help="the agent taking over")
    _assignment(re_)
    pub = sub.add_parser("publish", help="publish it to a library (a new version each time)")
    pub.add_argument("name", metavar="NAME")
    pub.add_argument("--to", required=True, metavar="LIBRARY", help="a library named in routine.yaml, or a folder")
    pub.add_argument("--with-grounding", action="store_true",
                     help="copy its grounding notes too (default: the agent note alone)")
    pub.add_argument("--force", action="store_true",
                     help="publish even if an e-mail address, phone number or URL with a secret is found")
    _json(pub)
    ins = sub.add_parser("install", help="install an agent from a library (checksums verified)")
    ins.add_argument("name", metavar="NAME[@VERSION]")
    ins.add_argument("--from", dest="library", required=True, metavar="LIBRARY",
                     help="a library named in routine.yaml (or general), or a folder")
    ins.add_argument("--force", action="store_true", help="replace your edited copy (kept in Archive/Agents/ first)")
    _json(ins)
    exp = sub.add_parser("export", help="write it in smolagents' folder format")
    exp.add_argument("name", metavar="NAME")
    exp.add_argument("--format", choices=["smolagents"], default="smolagents")
    exp.add_argument("dir", metavar="DIR")
    imp = sub.add_parser("import", help="bring a smolagents agent folder back as an agent note")
    imp.add_argument("dir", metavar="DIR")
    imp.add_argument("--name", metavar="NEW", help="the note's name (default: the agent's own)")
    _json(p)


def library(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="library_command", metavar="list|show")
    _json(sub.add_parser("list", help="the libraries routine.yaml names (and general) with their agents"))
    show = sub.add_parser("show", help="one library's agents, or one agent's versions and grounding")
    show.add_argument("library", metavar="LIBRARY")
    show.add_argument("agent", nargs="?", metavar="AGENT[@VERSION]")
    _json(show)


def graph(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="graph_command", metavar="show|neighbors|path")
    show = sub.add_parser("show", help="a view of the knowledge graph: a project, an agent, or the workspace")
    show.add_argument("kind", choices=["project", "agent", "workspace"], help="which kind of view")
    show.add_argument("name", nargs="?", default="", metavar="NAME", help="the project or agent (not for workspace)")
    _json(show)
    near = sub.add_parser("neighbors", help="what is linked to a note, by typed links, within --depth")
    near.add_argument("note", metavar="NOTE", help="a note's path or name ([[Alpha]], Projects/Alpha/Alpha.md)")
    near.add_argument("--depth", type=int, default=1, help="how many links away (default 1)")
    near.add_argument("--type", action="append", metavar="T",
                      help="only links of this type (members, assigned_to, derived_from…); repeatable")
    near.add_argument("--agent", metavar="NAME", help="only what this agent may read (its `reads:` scopes)")
    _json(near)
    way = sub.add_parser("path", help="the shortest chain of links between two notes")
    way.add_argument("a", metavar="A", help="a note's path or name")
    way.add_argument("b", metavar="B", help="another note's path or name")
    way.add_argument("--agent", metavar="NAME", help="only through notes this agent may read")
    _json(way)
    _json(p, parent=True)


def chat(p: argparse.ArgumentParser) -> None:
    p.add_argument("agent", metavar="AGENT|new", help="the agent to talk with; `new AGENT [TITLE]` creates a chat note")
    p.add_argument("words", nargs="*", metavar="AGENT TITLE", help="after `new`: the agent, then the note's title")
    p.add_argument("-c", "--continue", dest="continue_", action="store_true",
                   help="continue your last conversation with this agent")
    p.add_argument("--note", metavar="NOTE", help="begin with the conversation in this chat note")
    _model(p, "this conversation")


def ask(p: argparse.ArgumentParser) -> None:
    p.add_argument("agent", metavar="AGENT", help="the agent to ask, e.g. strategist")
    p.add_argument("question", metavar="QUESTION", help="your question, in quotes")
    p.add_argument("-c", "--continue", dest="continue_", action="store_true",
                   help="continue your last conversation with this agent")
    p.add_argument("--session", metavar="ID", help="continue this conversation (see `routine chats list`)")
    _model(p, "this question")
    _json(p, parent=True)


def chats(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="chats_command", metavar="list|show")
    ls = sub.add_parser("list", help="recent conversations, newest first")
    ls.add_argument("-n", "--limit", type=int, default=20, help="how many (default 20)")
    _json(ls)
    show = sub.add_parser("show", help="one conversation: every message, tool call and summary, in order")
    show.add_argument("chat_id", metavar="ID", help="a conversation id, or a unique prefix of one")
    _json(show)
    _json(p, parent=True)


def answer(p: argparse.ArgumentParser) -> None:
    p.add_argument("question", nargs="?", metavar="ID", help="the question's id (q-…); without it, list those waiting")
    p.add_argument("text", nargs="*", metavar="TEXT", help="your answer: a choice (or its number), or free text")
    _json(p, parent=True)


def remind(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="*", metavar="TEXT", help="what to remind you of (with --at)")
    p.add_argument("--at", metavar="WHEN", help="when: 15:00, 3pm, tomorrow 9:00, monday at 15:00, 2026-11-28 15:00, "
                   "in 2 hours, 90m (your local time, routine's `timezone:`)")
    p.add_argument("--list", action="store_true", help="the reminders waiting, then the last ones fired or ended")
    p.add_argument("--snooze", nargs=2, metavar=("ID", "15m|1h|tomorrow"),
                   help="fire reminder ID once more: in 15 minutes, an hour, or tomorrow at 09:00")
    p.add_argument("--done", metavar="ID", type=int, help="reminder ID never fires again")
    _json(p, parent=True)


def trigger(p: argparse.ArgumentParser) -> None:
    p.add_argument("event", metavar="NAME", help="the event: the triggers with `\"on\": event` and `event: NAME` run")
    p.add_argument("--input", action="append", default=[], metavar="KEY=VALUE",
                   help="a field of the payload (repeat it); the step sees the payload as data, never as a template")
    p.add_argument("--json-file", "--payload", dest="payload_file", metavar="FILE",
                   help="the payload: a JSON object from FILE (- for stdin)")
    _quiet(p)
    _json(p, parent=True)


def mcp(p: argparse.ArgumentParser) -> None:
    p.add_argument("--as", dest="as_agent", metavar="AGENT",
                   help="whose reads and writes apply (default: librarian); its changes are always proposals")


def trials(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="trials_command", metavar="list")
    _json(sub.add_parser("list", help="every trial: queued, running, or done with its verdict"))
    _json(p, parent=True)
