"""The control socket's ``chat`` request: one message of a terminal conversation, answered by
the daemon (its one model manager and search index), the answer's tokens streamed back.

Request: ``{"op": "chat", "agent", "question", "session"?, "continue"?, "model"?}`` (``model``: another alias); events
``Queued`` and ``Token`` (``routine.runner.events``); the end ``{"done": true, "result":
Answered.as_dict()}``.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from routine.chat.sessions import ask
from routine.config.loader import agent_named
from routine.config.overrides import on_model
from routine.daemon.ports import Jobs
from routine.daemon.work import Work
from routine.errors import RoutineError
from routine.journal import Journal
from routine.runner.events import Queued, Token

log = logging.getLogger(__name__)


def chat(jobs: Jobs, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
    alias = str(message["model"]) if message.get("model") else None
    agent = on_model(jobs.live.config, agent_named(jobs.live.agents, [], str(message.get("agent") or "")), alias,
                     write=True)
    done = threading.Event()
    result: dict[str, object] = {}  # "result" (Answered.as_dict()), or "error", "fix" and "exit"

    def work() -> None:
        journal = Journal()
        try:
            answered = ask(jobs.make_runner(journal), journal, agent, str(message.get("question") or ""),
                           session=message.get("session"), continue_last=bool(message.get("continue")),
                           on_token=lambda piece: send(Token(None, piece).to_json()))
            result["result"] = answered.as_dict()
            log.info("%s answered in conversation %s", agent.name, answered.chat)
        except RoutineError as exc:
            result.update(error=exc.message, fix=exc.fix, exit=exc.exit_code)
        except Exception as exc:  # the CLI must hear of it; the log has the traceback
            log.exception("chat request failed")
            result.update(error=f"internal error: {exc}", exit=1)
        finally:
            journal.close()
            done.set()

    jobs.queue.submit(Work(key=f"chat:{agent.name}", label=f"chat with {agent.name}", run=work,
                           models=jobs.model_keys([agent.name], alias)))
    snapshot = jobs.queue.snapshot()
    if snapshot.queued and snapshot.ahead():  # nothing ahead of it: nothing to wait for, nothing said
        send(Queued(snapshot.ahead()).to_json())
    done.wait()
    if "result" in result:
        send({"done": True, "result": result["result"], "exit": 0})
    else:
        send({"done": True, **result})
