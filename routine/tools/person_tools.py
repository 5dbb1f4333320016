"""Tools that reach the person (issue 45): ``ask_person``, the tool form of a step's ``ask`` block
(``routine.person.asks`` reads both alike). Only a block's step may ask: its block waits for the
answer and runs the step again with it; the tool loop ends at the question (``tools.loop``) and the
step writes nothing (``runner.step``)."""

from __future__ import annotations

from routine.person.asks import BadAsk, ask_of
from routine.tools.base import ToolContext, ToolError, tool


@tool("ask_person", "Ask the person one question when you lack a fact you cannot find in the notes; your work "
      "stops here and goes on with the answer. Give 2 to 4 short choices, or none for a free answer.",
      {"question": {"type": "string", "description": "the question, one sentence"},
       "choices": {"type": "string", "description": "2 to 4 short answers separated by ' | ', e.g. 'yes | no'; "
                                                    "empty for a free answer"},
       "deadline": {"type": "string", "description": "how long to wait: 2h, or a time such as 15:00; empty: a day"},
       "default": {"type": "string", "description": "the choice taken if no answer comes by then; empty: skip"}},
      required=["question"])
def ask_person(ctx: ToolContext, question: str, choices: str = "", deadline: str = "", default: str = "") -> str:
    if not ctx.may_ask:
        raise ToolError("You cannot ask the person here (only a scheduled block's step may ask, once); "
                        "decide with what the notes give you and say what you assumed.")
    listed = [c.strip() for c in choices.split("|") if c.strip()] if choices.strip() else None
    fields: dict[object, object] = {"question": question, "choices": listed, "deadline": deadline.strip() or None,
                                    "default": default.strip() or None}
    try:
        ask = ask_of(fields, ctx.now)
    except BadAsk as exc:
        raise ToolError(f"The question was not asked: {exc}.") from None
    ctx.asked.append(ask)
    return "Your question is on its way to the person. Stop here: this step runs again with the answer."
