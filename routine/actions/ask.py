"""`routine ask AGENT "question" [-c]`: one message to an agent, its answer streamed.

Through the running daemon when there is one (its one model manager and index, the control
socket's ``chat`` request), in this process otherwise. ``Asker`` is shared with `routine chat`.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Callable, TextIO

from routine.actions.fire import _progress
from routine.actions.search import agent_search
from routine.chat.conversation import SEARCH_K
from routine.chat.sessions import ask
from routine.config.loader import agent_named, load_agents, load_config
from routine.config.overrides import on_model
from routine.daemon import client
from routine.flows.step_setup import STEP_SETUP
from routine.journal import Journal
from routine.runner.events import Queued, Token, from_json
from routine.runner.step import Runner
from routine.terminal.output import print_json

if TYPE_CHECKING:
    from routine.jsonvalue import Parsed



class Asker:
    """Sends messages of one conversation: to the daemon if it runs, else answered here."""

    def __init__(self, config_arg: str | None, agent_name: str, model: str | None = None) -> None:
        self.config = load_config(config_arg)
        agents, problems = load_agents(self.config)
        self.model = model
        self.agent = on_model(self.config, agent_named(agents, problems, agent_name), model, write=True)
        self._runner: Runner | None = None
        self._journal: Journal | None = None

    def ask(self, question: str, session: str | None, continue_last: bool,
            on_token: Callable[[str], None] | None = None) -> Parsed:
        message = {"op": "chat", "agent": self.agent.name, "question": question, "session": session,
                   "continue": continue_last, **({"model": self.model} if self.model else {})}

        def on_event(line: Parsed) -> None:
            event = from_json(line)
            if isinstance(event, Token) and on_token:
                on_token(event.text)
            elif isinstance(event, Queued) and event.ahead:
                sys.stderr.write(f"(waiting for {event.ahead} job(s) in the daemon …)\n")

        final = client.call(message, on_event=on_event)
        if final is not None:
            reply: Parsed = client.result_of(final)  # the daemon's reply: the chat reply's as_dict
            return reply

        runner, journal = self._local()
        return ask(runner, journal, self.agent, question, session, continue_last, on_token).as_dict()

    def _local(self) -> tuple[Runner, Journal]:
        if self._runner is None:
            self._journal = Journal()
            # Without the daemon, the search index is brought up to date here first: show it.
            self._runner = Runner(self.config, self._journal, on_event=_progress(False), setup=STEP_SETUP)
        assert self._journal is not None  # made with the runner
        return self._runner, self._journal

    def outside_reads(self, question: str) -> str | None:
        """Better matches for the question that the agent's `reads:` hid from it, in one sentence."""
        if not question.strip():
            return None
        index = self._runner.memory if self._runner is not None else None  # answered here: its open index
        return agent_search(self.config, self.agent, question, SEARCH_K, index=index)[1]

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None
        if self._journal is not None:
            self._journal.close()
            self._journal = None


def stream_to(out: TextIO) -> Callable[[str], None]:
    def write(piece: str) -> None:
        out.write(piece)
        out.flush()

    return write


def said_rejected(result: Parsed) -> None:
    """Which reply is the answer, when earlier ones were rejected (the stream marked each)."""
    rejected = result.get("rejected") or []
    if rejected:
        sys.stderr.write(f"(the answer above is reply {len(rejected) + 1}; rejected before it: "
                         f"{'; '.join(rejected)})\n")


def run(args: argparse.Namespace) -> int:
    asker = Asker(args.config, args.agent, args.model)
    try:
        result = asker.ask(args.question, args.session, args.continue_, None if args.json else stream_to(sys.stdout))
        hidden = asker.outside_reads(args.question)
    finally:
        asker.close()
    if args.json:
        print_json({**result, **({"outside_reads": hidden} if hidden else {})})
        return 0
    sys.stdout.write("\n")
    said_rejected(result)
    if result.get("sources"):
        sys.stderr.write("Sources: " + " · ".join(result["sources"]) + "\n")
    if hidden:
        sys.stderr.write(hidden + "\n")
    sys.stderr.write(f"(conversation {result['chat']}; continue it with `routine ask {asker.agent.name} -c \"…\"`)\n")
    return 0
