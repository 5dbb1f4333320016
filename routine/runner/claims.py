"""The grounding check of a step's answer, before anything is written.

The answer's links, dates, figures and names are checked against what the model was given
(``routine/vault/grounding.py``, no model involved). An answer with unsupported claims is asked
for once more, with the list; if the new one still has some, it is written as a proposal that
names them (never as a finished section). The check is journaled with the run (``grounding``).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from routine.config.model import AgentSpec
from routine.errors import RoutineError
from routine.runner.prompt import Prompt
if TYPE_CHECKING:
    from routine.models.client import Completion, ModelClient
from routine.vault.grounding import Finding, Strictness, check, findings_text, grounds_for

log = logging.getLogger(__name__)

ASK_AGAIN = ("Some of what you wrote is not supported by the notes you were given:\n{findings}\n\n"
             "Write your whole answer again. Take every link, date, name and figure from the notes above, "
             "leave out what they do not support, and mark a figure of your own as an estimate with \"~\".")
HELD = ("The reply makes claims that the notes its agent was given do not support, so it is a proposal, "
        "not a finished section. Unsupported:\n{findings}")


@dataclass
class Checked:
    answer: Any                      # the completion to write (the second one when it was asked again)
    held: str | None = None          # why it goes to a proposal instead (its unsupported claims)
    record: dict | None = None       # journaled as the run's `grounding`


def review(
    models: ModelClient,
    agent: AgentSpec,
    built: Prompt,
    answer: Completion,
    tool_texts: list[str],
    vault: Path,
    today: date,
    run_id: str | None,
) -> Checked:
    """Check ``answer``; ask once more if it has unsupported claims; else hold it as a proposal."""
    strictness = Strictness(agent.grounding_check)
    if strictness is Strictness.OFF:
        return Checked(answer)
    shown = [m.get("content") or "" for m in built.messages] + tool_texts
    grounds = grounds_for(vault, list(agent.reads), shown, today)
    findings = check(answer.text, grounds, strictness)
    record: dict = {"strictness": strictness.value, "findings": _listed(findings), "asked_again": False,
                    "held": False}
    if not findings:
        return Checked(answer, record=record)
    log.warning("%s: %d unsupported claims; asking once more", agent.name, len(findings))
    again = _ask_again(models, agent, built, findings, run_id, record)
    if again is not None:
        record["asked_again"] = True
        answer = replace(again, tokens_in=(answer.tokens_in or 0) + (again.tokens_in or 0),
                         tokens_out=(answer.tokens_out or 0) + (again.tokens_out or 0),
                         duration_ms=answer.duration_ms + again.duration_ms)
        findings = check(answer.text, grounds, strictness)
        record["findings_after"] = _listed(findings)
        if not findings:
            return Checked(answer, record=record)
    record["held"] = True
    return Checked(answer, HELD.format(findings=findings_text(findings)), record)


def _ask_again(models: ModelClient, agent: AgentSpec, built: Prompt, findings: list[Finding], run_id: str | None,
               record: dict) -> Completion | None:
    """The model's second answer, told what was unsupported; None when there is no room or it failed."""
    nudge = ASK_AGAIN.format(findings=findings_text(findings))
    *head, last = built.messages
    messages = [*head, {**last, "content": f"{last['content']}\n\n{nudge}"}]
    if models.count(agent.model, messages) > models.limit(agent.model):
        record["not_asked_again"] = "no room in the window for the list of claims"
        return None
    try:
        return models.complete(agent.model, messages, run_id=run_id)
    except RoutineError as exc:  # the first answer stands, held as a proposal
        record["not_asked_again"] = exc.message
        return None


def _listed(findings: list[Finding]) -> list[dict]:
    return [asdict(f) for f in findings]
