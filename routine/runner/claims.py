"""The grounding check of a step's answer, before anything is written.

The answer's links, dates, figures and names are checked against what the model was given and the
notes its agent may read (``routine/vault/grounding.py``, no model involved; what the agent may
read is the scope resolver's, ``routine.access``, resolved before the step:
``AgentSpec.may_read``). An answer with unsupported claims is asked for once more, with each claim
and where support could be found; if the new one still has some, it is written as a proposal that
shows the answer with each claim marked where it stands (never as a finished section). The check
is journaled with the run (``grounding``); a note the answer was supported by without being shown
is named among the run's sources.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any

from routine.config.model import AgentSpec, Config
from routine.errors import RoutineError
from routine.runner.prompt import Prompt

if TYPE_CHECKING:
    from routine.jsonvalue import JSONObject
    from routine.models.client import Completion, ModelClient
from routine.vault.grounding import Finding, Review, Strictness, findings_text, grounds_for
from routine.vault.grounding import review as check_reply
from routine.vault.proposals import marked

log = logging.getLogger(__name__)

ASK_AGAIN = ("Some of what you wrote is not supported by the notes you were given:\n{findings}\n\n"
             "Write your whole answer again. Take every link, date, name and figure from the notes above "
             "(where a line says where to look, look there), work a figure out from them only in one step a reader "
             "can check (27 of 50 is 54%), leave out what they do not support, and mark a figure of your own as an "
             "estimate with \"~\".")
# Its first line is what the terminal says (the writer adds where the proposal is): the claims, named.
HELD = ("Held as a proposal: the notes do not support {named}.\n\n"
        "The reply makes claims that the notes its agent was given do not support, so it is a proposal, "
        "not a finished section. Check each claim marked ==like this== below (its footnote says why), then "
        "approve the text under \"Proposed text\" or correct it there first. Unsupported:\n{findings}\n\n"
        "## The reply with its unsupported claims marked\n\n{marked}")
NAMED = 5  # claims named in the terminal's one line


def named(findings: list[Finding]) -> str:
    """The unsupported claims in a line: "€7,900 (figure), Maria Schneider (person) and 2 more"."""
    said = [f"{f.claim} ({f.kind})" for f in findings[:NAMED]]
    more = len(findings) - len(said)
    if more:
        return ", ".join(said) + f" and {more} more"
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " or " + said[-1]


@dataclass
class Checked:
    answer: Any                      # the completion to write (the second one when it was asked again)
    held: str | None = None          # why it goes to a proposal instead (its unsupported claims, marked)
    record: JSONObject | None = None  # journaled as the run's `grounding`
    sources: list[str] = field(default_factory=list)  # notes not shown that supported a claim


def review(
    models: ModelClient,
    config: Config,
    agent: AgentSpec,
    built: Prompt,
    answer: Completion,
    tool_texts: list[str],
    today: date,
    run_id: str | None,
) -> Checked:
    """Check ``answer``; ask once more if it has unsupported claims; else hold it as a proposal."""
    strictness = Strictness(agent.grounding_check)
    if strictness is Strictness.OFF:
        return Checked(answer)
    shown = [m.get("content") or "" for m in built.messages] + tool_texts
    grounds = grounds_for(config.vault, agent.may_read, shown, today, skip=(config.layout.drafts,))
    checked = check_reply(answer.text, grounds, strictness)
    record: JSONObject = {"strictness": strictness.value, "findings": _listed(checked.findings), "asked_again": False,
                    "held": False, **_found_in(checked)}
    if not checked.findings:
        return Checked(answer, record=record, sources=sorted(set(checked.found_in.values())))
    log.warning("%s: %d unsupported claims; asking once more", agent.name, len(checked.findings))
    again = _ask_again(models, agent, built, checked.findings, run_id, record)
    if again is not None:
        record["asked_again"] = True
        answer = replace(again, tokens_in=(answer.tokens_in or 0) + (again.tokens_in or 0),
                         tokens_out=(answer.tokens_out or 0) + (again.tokens_out or 0),
                         duration_ms=answer.duration_ms + again.duration_ms)
        checked = check_reply(answer.text, grounds, strictness)
        record["findings_after"] = _listed(checked.findings)
        record.update(_found_in(checked))
        if not checked.findings:
            return Checked(answer, record=record, sources=sorted(set(checked.found_in.values())))
    record["held"] = True
    claims = [(f.claim, f.line()) for f in checked.findings]
    held = HELD.format(named=named(checked.findings), findings=findings_text(checked.findings),
                       marked=marked(answer.text, claims))
    return Checked(answer, held, record, sorted(set(checked.found_in.values())))


def _ask_again(models: ModelClient, agent: AgentSpec, built: Prompt, findings: list[Finding], run_id: str | None,
               record: JSONObject) -> Completion | None:
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


def _listed(findings: list[Finding]) -> list[JSONObject]:
    return [asdict(f) for f in findings]


def _found_in(checked: Review) -> JSONObject:
    return {"found_in": dict(checked.found_in)} if checked.found_in else {}
