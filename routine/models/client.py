"""Model calls, with retries, exponential backoff and the alias's fallbacks.

Each deployment's provider adapter makes the call (``routine.models.providers``): Ollama's through
the light `ollama` client, an OpenAI-compatible server's through LiteLLM, imported only then.
`routine --help` and every listing command stay light, and so does the daemon of an Ollama box.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import urlsplit

from routine.config.model import Config, Deployment, ModelAlias
from routine.config.providers import Provider
from routine.errors import ContextOverflow, ModelBusy, ModelError, ModelMissing, ReplyRejected, RoutineError
from routine.journal.token_samples import TokenSamples
from routine.jsonvalue import JSONObject
from routine.models import reply as replies
from routine.models.calibration import Calibration
from routine.models.manager import ModelManager
from routine.models.ollama_host import ChatReply
from routine.models.providers import ChatRequest, adapter
from routine.models.tokens import Counter, Message, ToolSchema, count_request

log = logging.getLogger(__name__)


@dataclass
class Completion:
    text: str
    alias: str
    model: str  # the model string (as routine.yaml names it) that answered
    tokens_in: int | None = None
    tokens_out: int | None = None
    load_duration_ms: int | None = None
    duration_ms: int = 0
    attempts: list[str] = field(default_factory=list)  # what failed before this answer, for the journal
    warm: bool | None = None  # the model was resident when the call began (None: no residency to speak of)
    tool_calls: list[JSONObject] = field(default_factory=list)  # {"id", "name", "arguments"} the model asked for
    finish_reason: str | None = None  # stop | length | tool_calls, as the server said
    counted: int | None = None  # the prompt tokens we counted before sending
    rejected: list[str] = field(default_factory=list)  # why each reply before this one was not used (it may
    # have been streamed: the stream then said so)

    @property
    def attempt(self) -> int:
        """Which reply this is, counting every reply asked for (1: the first was accepted)."""
        return len(self.rejected) + 1


def prepare(config: Config) -> None:
    """Import the client libraries the aliases need now, so that a call whose time is measured
    (a trial's first token) does not pay for the import."""
    import ollama  # noqa: F401  (the light client every Ollama deployment uses)

    if any(not d.provider.manages_residency for alias in config.models.values() for d in alias.deployments):
        from routine.models import litellm_chat  # lazy: litellm, only for an OpenAI-compatible deployment

        litellm_chat.load(config.ollama_host)


@dataclass(frozen=True)
class _Call:
    """What one completion asks for, passed down through deployments and retries."""

    messages: list[Message]
    on_token: Callable[[str], None] | None
    run_id: str | None
    prefetch: str | None
    tools: list[ToolSchema] | None
    timeout: float | None
    on_phase: Callable[[str], None] | None = None  # "loading MODEL", "generating": what the call waits on
    rejected: list[str] = field(default_factory=list)  # replies not used so far, shared by retries and fallbacks


class _Stream:
    """The caller's ``on_token``; when a streamed reply is thrown away, a line in the stream says so
    before anything else is streamed, so a rejected answer is never shown as if accepted."""

    def __init__(self, on_token: Callable[[str], None]):
        self.on_token = on_token
        self.shown = False  # something was streamed since the last such line

    def __call__(self, piece: str) -> None:
        self.shown = True
        self.on_token(piece)

    def rejected(self, reason: str, then: str = "") -> None:
        if self.shown:
            self.on_token(f"\n\n{REJECTED_MARK} ({reason}){'; ' + then if then else ''} —\n\n")
            self.shown = False


REJECTED_MARK = "— this answer was rejected"


class ModelClient:
    """Answers a chat for an alias: its deployments, then its fallbacks, each with retries.

    Every Ollama call holds a lease of the model manager, which decides residency; the
    request then carries the alias's pinned options, so Ollama never reloads a model.
    """

    def __init__(self, config: Config, manager: ModelManager | None = None,
                 sleep: Callable[[float], None] = time.sleep, calibration: Calibration | None = None) -> None:
        self.config = config
        self.manager = manager or ModelManager(config)
        self.sleep = sleep
        if calibration is None:  # the journal the manager records in also keeps the token samples
            events = getattr(self.manager, "events", None)
            store = None
            if events is not None:
                store = TokenSamples(events.db)  # one connection, every thread (statedb.Connection)
            calibration = Calibration(store)
        self.calibration = calibration

    def counter(self, alias_name: str) -> Counter:
        alias = self.config.models[alias_name]
        return self.calibration.counter(alias.model, alias.tokenizer)

    def count(self, alias_name: str, messages: list[Message], tools: list[ToolSchema] | None = None) -> int:
        return count_request(self.counter(alias_name), messages, tools)

    def limit(self, alias_name: str) -> int:
        """The most prompt tokens a request to this alias may carry: its window less the answer's reserve."""
        alias = self.config.models[alias_name]
        return alias.num_ctx - alias.num_predict

    def complete(self, alias_name: str, messages: list[Message], on_token: Callable[[str], None] | None = None,
                 run_id: str | None = None, prefetch: str | None = None, tools: list[ToolSchema] | None = None,
                 timeout: float | None = None, on_phase: Callable[[str], None] | None = None) -> Completion:
        """Answer with the alias, else each fallback in order. Raises the first alias's error.

        ``prefetch``: the alias the next step will need; it is preloaded while this call runs
        when that delays nothing. ``tools``: function specs (a streamed turn still carries its calls).
        ``timeout``: at most this long for the call (never longer than request_timeout)."""
        stream = _Stream(on_token) if on_token is not None else None
        call = _Call(messages, stream, run_id, prefetch, tools, timeout, on_phase)
        chain = [alias_name] + [fb for fb in self.config.models[alias_name].fallbacks if fb != alias_name]
        attempts: list[str] = []
        first_error: RoutineError | None = None
        for name in chain:
            alias = self.config.models[name]
            counted = self.count(name, messages, tools)
            if counted > self.limit(name):
                exc: RoutineError = ContextOverflow(name, counted, self.limit(name), alias.num_ctx)
                attempts.append(f"{name}: {exc.message}")
                first_error = first_error or exc
                continue
            for dep in self._deployments(alias):
                try:
                    result = self._checked(alias, dep, call)
                except ModelError as exc:
                    attempts.append(f"{name} ({dep.label}): {exc.message}")
                    first_error = first_error or exc
                    log.warning("model %s at %s failed: %s", name, dep.api_base, exc.message)
                    if stream is not None:
                        stream.rejected(getattr(exc, "problem", None) or "the call failed")
                    continue
                result.attempts = attempts
                result.counted = counted
                result.rejected = list(call.rejected)
                return result
        assert first_error is not None
        raise first_error

    def _checked(self, alias: ModelAlias, dep: Deployment, call: "_Call") -> Completion:
        """One answer that is fit to write, else ReplyRejected. A bad reply is tried once more
        (sampling differs; a cut-off one is asked to be shorter)."""
        result = self._with_retries(alias, dep, call)
        first = problem = self._problem(alias, result)
        if problem is not None:
            call.rejected.append(problem.value)
        if problem is not None and problem.retry_helps:
            log.warning("reply of %s was %s; asking once more", alias.name, problem.value)
            if isinstance(call.on_token, _Stream):
                call.on_token.rejected(problem.value, "asking again")
            result = self._with_retries(alias, dep, _retry_call(call, problem))
            problem = self._problem(alias, result)
            if problem is not None:
                call.rejected.append(problem.value)
        if problem is not None and (stopless := _did_not_stop(first, problem)) is not None:
            raise ReplyRejected(dep.model, stopless, " ".join(result.text.split())[:80], NO_STOP_FIX)
        if problem is not None:
            raise ReplyRejected(dep.model, problem.value, " ".join(result.text.split())[:80], _FIX[problem])
        result.text = replies.strip_trailing_control(result.text, dep.model) if not result.tool_calls else result.text
        return result

    def _problem(self, alias: ModelAlias, result: Completion) -> "replies.ReplyProblem | None":
        if result.tokens_in is not None and result.tokens_in >= alias.num_ctx - PROMPT_CUT_MARGIN:
            return replies.ReplyProblem.PROMPT_CUT
        if result.tool_calls:
            return None
        return replies.problem_with(result.text, result.finish_reason, result.model)

    def _deployments(self, alias: ModelAlias) -> list[Deployment]:
        """Where to try first: a host that has the model resident, then one with a free slot,
        then the order the person listed them in."""
        deps = list(alias.deployments)
        if len(deps) > 1:
            for host in {d.api_base for d in deps if d.provider.manages_residency}:
                try:
                    self.manager.refresh(host)
                except ModelError:
                    pass  # unreachable: its attempt fails fast and the next deployment answers
        return sorted(deps, key=lambda d: (not (d.provider.manages_residency and self.manager.is_resident(d)),
                                           not (d.provider.manages_residency and self.manager.has_free_slot(d)),
                                           deps.index(d)))

    def _with_retries(self, alias: ModelAlias, dep: Deployment, call: "_Call") -> Completion:
        delay = self.config.retry_backoff
        for attempt in range(self.config.retries + 1):
            try:
                return self._once(alias, dep, call)
            except (ModelMissing, ModelBusy):
                raise  # no retry can pull a model, and a busy host was already waited for
            except ModelError as exc:
                if attempt == self.config.retries:
                    raise
                log.info("retrying %s in %.1fs after: %s", alias.name, delay, exc.message)
                if call.on_phase is not None:  # the live line says what it waits for, not `starting`
                    call.on_phase(f"waiting for {server_of(dep)}")
                self.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")

    def _once(self, alias: ModelAlias, dep: Deployment, call: "_Call") -> Completion:
        started = time.monotonic()
        phase = call.on_phase or (lambda _: None)
        lease = (self.manager.lease(alias, dep, call.run_id, on_load=lambda: phase(f"loading {dep.served_name}"))
                 if dep.provider.manages_residency else None)
        phase("generating")
        try:
            if call.prefetch and call.prefetch != alias.name:
                self._prefetch(call.prefetch, call.run_id)
            response = self._call(alias, dep, call)
        finally:
            if lease is not None:
                lease.release()
        counted = self.count(alias.name, call.messages, call.tools)
        self.calibration.record(dep.model, alias.tokenizer, call.messages, call.tools, response.tokens_in, counted,
                                call.run_id)
        return Completion(
            text=response.text,
            alias=alias.name,
            model=dep.model,
            tokens_in=response.tokens_in,
            tokens_out=response.tokens_out,
            load_duration_ms=(lease.load_ms or 0) if lease is not None else None,
            duration_ms=int((time.monotonic() - started) * 1000),
            warm=lease.warm if lease is not None else None,
            tool_calls=response.tool_calls,
            finish_reason=response.finish_reason,
        )

    def _prefetch(self, alias_name: str, run_id: str | None) -> None:
        alias = self.config.models.get(alias_name)
        if alias is None or not alias.primary.provider.manages_residency:
            return

        def load() -> None:
            try:
                self.manager.preload(alias, alias.primary, self.manager.clock(), run_id, reason="preload:next-step")
            except ModelError as exc:  # the step itself will load it and report any problem
                log.info("prefetch of %s skipped: %s", alias_name, exc.message)

        threading.Thread(target=load, name=f"prefetch-{alias_name}", daemon=True).start()

    def _call(self, alias: ModelAlias, dep: Deployment, call: "_Call") -> ChatReply:
        timeout = self.config.request_timeout
        if call.timeout:  # the time left, rounded up to a power of two seconds: each distinct timeout is a
            # client kept by the provider (about 1 MB each), and the time left differs from call to call
            timeout = min(timeout, float(2 ** max(0, math.ceil(math.log2(max(call.timeout, 1.0))))))
        request = ChatRequest(call.messages, call.tools, call.on_token, timeout, self.manager.keep_alive_for(alias),
                              self.config.ollama_host)
        return adapter(dep).chat(alias, dep, request)


PROMPT_CUT_MARGIN = 16  # a prompt this close to num_ctx was cut by the server to fit

NO_STOP = "the model did not stop; it may not follow instructions"
_STOPLESS = {  # (first reply, the retry): what a model that does not follow the prompt did
    (replies.ReplyProblem.CUT_OFF, replies.ReplyProblem.CUT_OFF):
        "cut off at the answer's token limit twice, the second time when asked for a much shorter answer",
    (replies.ReplyProblem.CUT_OFF, replies.ReplyProblem.REPETITION):
        "cut off at the answer's token limit, then, asked for a much shorter answer, a loop repeating itself",
    (replies.ReplyProblem.REPETITION, replies.ReplyProblem.CUT_OFF):
        "a loop repeating itself, then, asked again, cut off at the answer's token limit",
}


def _did_not_stop(first: "replies.ReplyProblem | None", last: "replies.ReplyProblem") -> str | None:
    """What to call two bad replies that show a model running on to the token limit; None for other failures."""
    what = _STOPLESS.get((first, last)) if first is not None else None
    return f"{what}: {NO_STOP}" if what else None

NO_STOP_FIX = ("use a larger or instruction-tuned model for this alias (check it with `ollama run`); raising "
               "`num_predict` helps only a model that stops by itself.")
_FIX = {
    replies.ReplyProblem.CUT_OFF: "raise `num_predict` for the model alias in routine.yaml, "
    "or ask for a shorter answer.",
    replies.ReplyProblem.EMPTY: "try again with `routine fire`; if it persists, check the model with `ollama run`.",
    replies.ReplyProblem.CONTROL_TOKENS: "the model's chat template does not match its server; check the model "
    "(`ollama show --modelfile`) or the OpenAI-compatible server's template.",
    replies.ReplyProblem.REPETITION: "try again; if it persists, use a larger model or set a repeat_penalty in "
    "the alias's options.",
    replies.ReplyProblem.PROMPT_CUT: "raise `num_ctx` for the model alias in routine.yaml (the prompt was counted "
    "too low: see `routine runs show`).",
}


def server_of(dep: Deployment) -> str:
    """The server a call waits on, as the person knows it: `Ollama at 127.0.0.1:11434`."""
    where = urlsplit(dep.api_base).netloc or dep.api_base
    return f"Ollama at {where}" if dep.provider is Provider.OLLAMA else f"the model server at {where}"


def _retry_call(call: "_Call", problem: "replies.ReplyProblem") -> "_Call":
    if problem is not replies.ReplyProblem.CUT_OFF:
        return call
    from dataclasses import replace

    nudge = {"role": "user", "content": "Your previous answer was too long and was cut off. Answer again, "
                                        "complete but much shorter."}
    return replace(call, messages=[*call.messages, nudge])
