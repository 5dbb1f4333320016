"""The agent loop: model turn → tool calls → validated execution → results back → … → answer.

Bounded by ``max_iterations`` model turns and a ``timeout`` for the whole run. Tool turns are
not streamed (LiteLLM drops tool calls when streaming with ``ollama/``). Every model message,
call, argument, result and error goes into the transcript, which the journal keeps and
`routine runs show` renders. A refused or failed call is told to the model as the tool's result,
so it can correct itself, and counted.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import Callable

from routine.errors import Abandoned, RoutineError
from routine.journal.runs import CallAsked, ToolCall, TranscriptEntry
from routine.journal.status import RunStatus
from routine.models.client import Completion, ModelClient
from routine.models.tokens import Message, ToolSchema, longest_head
from routine.tools.base import Tool, ToolContext, ToolError, checked_arguments
from routine.tools.calls import Call, calls_in_text, native_calls

log = logging.getLogger(__name__)

LOGGED_RESULT_CHARS = 4000  # per tool result in the transcript; the model gets the whole result


@dataclass
class LoopResult:
    status: RunStatus = RunStatus.OK  # ok | max-iterations | timeout
    result: str = ""                  # the final answer (ok), or the model's last words
    error: str | None = None
    log: list[TranscriptEntry] = field(default_factory=list)
    turns: int = 0
    calls: int = 0
    refused: int = 0
    completions: list[Completion] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)  # every tool result the model was given, whole


def run_tool_loop(client: ModelClient, alias: str, messages: list[Message], tools: list[Tool], ctx: ToolContext,
                  max_iterations: int, timeout: float, run_id: str | None = None,
                  beat: Callable[[], None] = lambda: None, out: LoopResult | None = None,
                  on_token: Callable[[str], None] | None = None,
                  on_phase: Callable[[str], None] | None = None) -> LoopResult:
    """``out``: filled as the loop goes, so the caller keeps the transcript even when a model
    call raises halfway (a tool may already have written). ``on_token``: each turn streamed
    (a conversation shows its answer as it comes)."""
    by_name = {t.name: t for t in tools}
    specs = [t.spec() for t in tools]
    messages = list(messages)
    out = out if out is not None else LoopResult()
    started = time.monotonic()
    for turn in range(1, max_iterations + 1):
        left = timeout - (time.monotonic() - started)
        if left <= 0:
            return _stop(out, RunStatus.TIMEOUT,
                         f"stopped after {timeout:.0f}s (the agent's timeout) without a final answer")
        beat()
        _fit_transcript(client, alias, messages, specs, out)
        answer = client.complete(alias, messages, run_id=run_id, tools=specs, timeout=left, on_token=on_token,
                                 on_phase=on_phase)
        out.completions.append(answer)
        out.turns = turn
        if time.monotonic() - started > timeout:  # a retry's answer, say, that came after the time was up
            return _stop(
                out, RunStatus.TIMEOUT,
                f"stopped after {timeout:.0f}s (the agent's timeout); the last answer came too late"
            )
        calls = native_calls(answer.tool_calls) or calls_in_text(answer.text, set(by_name))
        out.log.append({"type": "model", "turn": turn, "content": answer.text,
                        "calls": [_asked(c) for c in calls],
                        "tokens_in": answer.tokens_in, "tokens_out": answer.tokens_out, "ms": answer.duration_ms})
        if not calls:
            out.result = answer.text
            return out
        messages.append({"role": "assistant", "content": "" if calls[0].from_text else (answer.text or ""),
                         "tool_calls": [{"id": c.id, "type": "function",
                                         "function": {"name": c.name, "arguments": json.dumps(c.arguments or {})}}
                                        for c in calls]})
        for call in calls:
            if time.monotonic() - started > timeout:
                return _stop(
                    out, RunStatus.TIMEOUT, f"stopped after {timeout:.0f}s (the agent's timeout), during the tool calls"
                )
            content = _execute(call, by_name, ctx, out, turn)
            out.shown.append(content)
            messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content})
        if ctx.asked:  # the agent asked the person (ask_person): the step waits for the answer, no more turns
            out.result = answer.text or ""
            return out
    return _stop(
        out,
        RunStatus.MAX_ITERATIONS,
        f"stopped after {max_iterations} model turns without a final answer (max_iterations in the agent note)",
    )


ELIDED = "[This tool result was left out for length; call the tool again if you still need it.]"
CUT = "\n[… the rest of this result was left out for length: ask for less, e.g. a narrower folder, a smaller limit]"


def _fit_transcript(client: ModelClient, alias: str, messages: list[Message], specs: list[ToolSchema],
                    out: LoopResult) -> None:
    """Keep the next request inside the window, giving back only what the loop itself added:
    older tool results first (the model can ask again), then older exchanges whole, then the
    latest results cut to the room left. The step's own prompt was planned to leave room
    (the agent's ``tool_reserve``), so a request over the window after this is the prompt's
    fault, and the client refuses it."""
    limit = client.limit(alias)

    def over() -> int:
        return client.count(alias, messages, specs) - limit

    if over() <= 0:
        return
    latest = _latest_results(messages)
    for m in [m for m in messages if m.get("role") == "tool" and not any(m is x for x in latest)]:
        if m["content"] != ELIDED:
            m["content"] = ELIDED
            out.log.append({"type": "elided", "tool": m.get("name"), "reason": "left out of later turns for length"})
            if over() <= 0:
                return
    while _drop_oldest_exchange(messages, latest):
        out.log.append({"type": "elided", "tool": None, "reason": "an earlier tool exchange left out for length"})
        if over() <= 0:
            return
    _fold_arguments(messages)
    counter = client.counter(alias)
    for m in sorted(latest, key=lambda m: -len(m["content"])):
        excess = over()
        if excess <= 0:
            return
        size = counter.text(m["content"])
        head = longest_head(m["content"], size - excess - 8, counter, CUT) if size - excess - 8 > 0 else ""
        m["content"] = head + CUT if head else ELIDED
        out.log.append({"type": "elided", "tool": m.get("name"),
                        "reason": f"cut to the {max(0, size - excess)} tokens left in the window"})


FOLDED_ARGUMENT = 200  # characters of a call's argument kept once the call was carried out


def _fold_arguments(messages: list[Message]) -> None:
    """The latest calls were carried out: their long arguments (a note's content) need not travel again."""
    at = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
    for call in (messages[at].get("tool_calls") or []) if at is not None else []:
        args = json.loads(call["function"]["arguments"] or "{}")
        if isinstance(args, dict) and any(isinstance(v, str) and len(v) > FOLDED_ARGUMENT for v in args.values()):
            call["function"]["arguments"] = json.dumps(
                {k: f"{v[:FOLDED_ARGUMENT]}[… {len(v) - FOLDED_ARGUMENT} characters, already carried out]"
                 if isinstance(v, str) and len(v) > FOLDED_ARGUMENT else v for k, v in args.items()})


def _latest_results(messages: list[Message]) -> list[Message]:
    """The tool results that answer the model's latest calls."""
    at = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=len(messages))
    return [m for m in messages[at:] if m.get("role") == "tool"]


def _drop_oldest_exchange(messages: list[Message], keep: list[Message]) -> bool:
    """Remove the oldest assistant turn with tool calls and its results, unless it is the latest."""
    start = next((i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls")), None)
    if start is None:
        return False
    end = start + 1
    while end < len(messages) and messages[end].get("role") == "tool":
        end += 1
    if any(m is k for m in messages[start:end] for k in keep):
        return False
    del messages[start:end]
    return True


def _stop(out: LoopResult, status: RunStatus, error: str) -> LoopResult:
    out.status, out.error = status, error
    out.result = next((e["content"] for e in reversed(out.log) if e["type"] == "model" and e["content"]), "")
    log.warning("tool loop %s: %s", status, error)
    return out


def _execute(call: Call, by_name: dict[str, Tool], ctx: ToolContext, out: LoopResult, turn: int) -> str:
    """Run one call; whatever happens, a sentence for the model and an entry in the transcript."""
    started = time.monotonic()
    out.calls += 1
    entry: ToolCall = {"type": "tool", "turn": turn, "name": call.name,
             "arguments": call.arguments if call.arguments is not None else call.raw}
    try:
        tool = by_name.get(call.name)
        if tool is None:
            raise ToolError(_unknown(call.name, by_name))
        if call.problem:
            raise ToolError(f"{call.name}: {call.problem}.")
        args = checked_arguments(tool, call.arguments)
        result = tool.call(ctx, args)
        content = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        entry["result"] = _for_log(content)
    except Abandoned:
        raise  # the daemon is stopping: the run ends here, nothing more is written
    except (ToolError, RoutineError) as exc:
        out.refused += 1
        content = f"Refused: {exc.message if isinstance(exc, RoutineError) else exc}"
        entry["refused"], entry["error"] = True, content
    except Exception as exc:  # a tool's own bug: the model hears of it, the run goes on, the log has it
        out.refused += 1
        log.exception("tool %s failed", call.name)
        content = f"Error: {call.name} failed ({type(exc).__name__}: {exc})."
        entry["refused"], entry["error"] = True, content
    entry["ms"] = int((time.monotonic() - started) * 1000)
    out.log.append(entry)
    return content


def _asked(call: Call) -> CallAsked:
    asked: CallAsked = {"name": call.name, "arguments": call.arguments if call.arguments is not None else call.raw}
    if call.from_text:
        asked["written_as_text"] = True
    return asked


def _unknown(name: str, by_name: dict[str, Tool]) -> str:
    from routine.tools.registry import TOOLS  # lazy: jsonschema, which the tools' declarations load

    mine = ", ".join(sorted(by_name)) or "none"
    if name in TOOLS:
        return f"You may not use {name}: it is not among your tools ({mine})."
    close = get_close_matches(name, list(by_name), n=1)
    return f"There is no tool {name!r}" + (f"; did you mean {close[0]}?" if close else ".") + f" Your tools: {mine}."


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    tail = limit // 5  # the end of an output often says how it ended
    return f"{text[:limit - tail]}\n[… {len(text) - limit} characters not kept in the journal …]\n{text[-tail:]}"


def _for_log(content: str) -> str:
    """A tool result as the transcript keeps it: bounded, and still valid JSON when it was JSON."""
    try:
        value = json.loads(content)
    except ValueError:
        return _shorten(content, LOGGED_RESULT_CHARS)
    if isinstance(value, dict):
        value = {k: _shorten(v, LOGGED_RESULT_CHARS) if isinstance(v, str) else v for k, v in value.items()}
        return json.dumps(value, ensure_ascii=False)
    return _shorten(content, LOGGED_RESULT_CHARS)
