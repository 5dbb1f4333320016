"""Counting a request's tokens before it is sent, so no request ever exceeds the window.

What is counted is what is really sent: every message (content and tool calls), the tool
schemas, and the chat template's overhead per message. Two ways to count a text:

- a tokenizer of the model's family, offline: Mistral's (the sentencepiece model shipped in PyPI
  ``mistral-common``, read with ``sentencepiece``; mistral-common itself, 40 MB of imports, is
  never imported) for ``tokenizer: mistral``, Qwen's byte-level BPE (``qwen.tiktoken``, shipped inside PyPI
  ``dashscope``, read with ``tiktoken``; dashscope itself is never imported) for ``tokenizer: qwen``;
  ``tokenizer: auto`` (the default) picks one from the model's name when it is installed.
- otherwise an estimate that errs high: digits and punctuation count one token each (Llama and
  Mistral tokenizers split digits), other non-ASCII characters two (an emoji five: byte
  fallback), letters and spaces ``chars_per_token`` characters a token.

Either count learns from what the server reports it evaluated (``prompt_eval_count``), kept in
the journal (``token_samples``): the count is scaled by the largest ratio of reported to counted
seen lately (an estimate both ways, a tokenizer only upwards: its count of the text is exact).
Ollama's count can be lower than the truth when it reuses a cached prompt prefix: cached requests
only make a sample look cheaper, and the least cheap one is the honest one.

A tokenizer is loaded on first use and released after ``RELEASE_AFTER`` seconds without a count
(Qwen's vocabulary holds some 50 MB): the daemon between runs keeps none (issue 47).
"""

from __future__ import annotations

import base64
import gc
import importlib.util
import json
import math
import string
import threading
import time
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeAlias

from routine.host import sysmetrics
from routine.jsonvalue import JSONObject

# One chat message as LiteLLM takes it: "role" and "content", and on a tool turn "name", "tool_calls",
# "tool_call_id". LiteLLM's own type for it is untyped; the runner, the tool loop and chat read it by key.
Message: TypeAlias = dict[str, Any]
# A tool as the model is offered it (the OpenAI function format: routine.tools.base.Tool.spec).
ToolSchema: TypeAlias = JSONObject

DEFAULT_CHARS_PER_TOKEN = 3.2  # letters and spaces; with the rest counted apart, Mistral errs ≤ 4% above
MIN_SCALE, MAX_SCALE = 0.2, 5.0  # a learned scale outside these is a server that reports nonsense
CALIBRATION_SAFETY = 1.02      # the learned scale is raised by 2%: count a little high
MIN_SAMPLES = 3                # until then the uncalibrated count stands
MIN_SAMPLE_TOKENS = 60         # a smaller request tells too little
SAMPLE_WINDOW = 50             # the calibration looks at the latest samples only
MESSAGE_OVERHEAD = 8           # role markers and template tokens around each message
REQUEST_OVERHEAD = 16          # BOS, the generation prompt, a system-prompt wrapper
TOOLS_OVERHEAD = 24            # the template's wrapper around the tool schemas
ENCODE_CHUNK = 50_000          # tiktoken's BPE recurses: a very long text is encoded in pieces
ESTIMATE = "estimate"          # the counter name of the estimate (the others: a tokenizer's name)


class Method(Enum):
    """How an alias's prompts are counted now."""

    TOKENIZER = "tokenizer"    # the model family's own tokenizer
    CALIBRATED = "calibrated"  # the estimate, scaled by what the server reported
    DEFAULT = "default"        # the estimate, not yet calibrated (fewer than MIN_SAMPLES samples)


@dataclass(frozen=True)
class Shape:
    """What a text costs in the estimate: tokens counted one each, and the rest in characters."""

    fixed: int  # tokens counted one by one: digits, punctuation, other non-ASCII characters
    chars: int  # letters and spaces (ASCII)

    def tokens(self, chars_per_token: float) -> int:
        return self.fixed + math.ceil(self.chars / chars_per_token)


_PUNCTUATION = frozenset(string.punctuation)


def shape_of(text: str) -> Shape:
    fixed = plain = 0
    for ch in text:
        if ch.isascii():
            if ch.isdigit() or ch in _PUNCTUATION:
                fixed += 1
            else:
                plain += 1
        else:
            fixed += 5 if ord(ch) > 0xFFFF else 2
    return Shape(fixed, plain)


def request_texts(messages: list[Message], tools: list[ToolSchema] | None = None) -> list[str]:
    """Every piece of text a request carries, one per message (tool schemas last)."""
    texts = []
    for m in messages:
        text = _content(m.get("content"))
        if m.get("tool_calls"):
            text += json.dumps(m["tool_calls"], ensure_ascii=False)
        texts.append(text)
    if tools:
        texts.append(json.dumps(tools, ensure_ascii=False))
    return texts


def _content(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI-style parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def overhead(messages: list[Message], tools: list[ToolSchema] | None) -> int:
    return REQUEST_OVERHEAD + MESSAGE_OVERHEAD * len(messages) + (TOOLS_OVERHEAD if tools else 0)


class Counter(Protocol):
    exact: bool
    method: Method

    def text(self, text: str) -> int: ...


class Estimate:
    """Letters and spaces at ``chars_per_token``, the rest one by one; times the learned ``scale``."""

    exact = False

    def __init__(self, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN, scale: float | None = None):
        self.chars_per_token = chars_per_token
        self.scale = scale
        self.method = Method.DEFAULT if scale is None else Method.CALIBRATED

    def text(self, text: str) -> int:
        tokens = shape_of(text).tokens(self.chars_per_token)
        return tokens if self.scale is None else math.ceil(tokens * self.scale)


class MistralTokens:
    """Mistral's tokenizer (sentencepiece, shipped inside ``mistral-common``): exact, offline."""

    exact = True
    method = Method.TOKENIZER

    def __init__(self) -> None:
        self._raw = _mistral_tokenizer()
        _in_use()

    def text(self, text: str) -> int:
        _idle.last = time.monotonic()
        if not text:
            return 0
        try:
            return len(self._raw.encode(text))
        except (RuntimeError, UnicodeError, TypeError):  # lone surrogates (a name that is not UTF-8) cannot be cast
            return len(self._raw.encode(_castable(text)))


class QwenTokens:
    """Qwen's byte-level BPE (151,643 merges, the vocabulary of Qwen 1 to 3): exact for the text, offline."""

    exact = True
    method = Method.TOKENIZER

    def __init__(self) -> None:
        self._encoding = _qwen_encoding()
        _in_use()

    def text(self, text: str) -> int:
        _idle.last = time.monotonic()
        if not text:
            return 0
        text = _castable(text)
        return sum(len(self._encoding.encode_ordinary(text[i:i + ENCODE_CHUNK]))
                   for i in range(0, len(text), ENCODE_CHUNK))


class Scaled:
    """A tokenizer's count raised by what the server reported beyond it (a template it adds, a newer vocabulary)."""

    exact = False
    method = Method.TOKENIZER

    def __init__(self, inner: Counter, scale: float):
        self.inner, self.scale = inner, scale

    def text(self, text: str) -> int:
        return math.ceil(self.inner.text(text) * self.scale)


def _castable(text: str) -> str:
    """Lone surrogates (a file name that is not UTF-8) as escapes: every tokenizer can take it."""
    try:
        text.encode("utf-8")
    except UnicodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


MISTRAL_V3 = "mistral_instruct_tokenizer_240323.model.v3"  # what mistral-common's MistralTokenizer.v3() reads


def mistral_model() -> Path | None:
    """Mistral's v3 sentencepiece model inside the installed ``mistral-common``, found without importing it."""
    try:
        spec = importlib.util.find_spec("mistral_common")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / "data" / MISTRAL_V3
        if path.is_file():
            return path
    return None


@lru_cache(maxsize=1)
def _mistral_tokenizer() -> Any:
    """The same sentencepiece model and call as mistral-common's tokenizer (``encode(s)`` without bos/eos)."""
    path = mistral_model()
    if path is None:
        raise ModuleNotFoundError("mistral-common (which ships Mistral's tokenizer) is not installed")
    from sentencepiece import SentencePieceProcessor

    return SentencePieceProcessor(model_file=str(path))


QWEN_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def qwen_vocabulary() -> Path | None:
    """``qwen.tiktoken`` inside the installed ``dashscope`` package, found without importing it."""
    try:
        spec = importlib.util.find_spec("dashscope")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / "resources" / "qwen.tiktoken"
        if path.is_file():
            return path
    return None


@lru_cache(maxsize=1)
def _qwen_encoding() -> Any:
    path = qwen_vocabulary()
    if path is None:
        raise ModuleNotFoundError("dashscope (which ships qwen.tiktoken) is not installed")
    import tiktoken

    ranks = {base64.b64decode(token): int(rank)
             for token, rank in (line.split() for line in path.read_bytes().splitlines() if line)}
    return tiktoken.Encoding(name="qwen", pat_str=QWEN_PATTERN, mergeable_ranks=ranks, special_tokens={})


_TOKENIZERS: dict[str, tuple[type[MistralTokens] | type[QwenTokens], Any]] = {
    "mistral": (MistralTokens, _mistral_tokenizer),
    "qwen": (QwenTokens, _qwen_encoding),
}
_FILES = {"mistral": (mistral_model, "sentencepiece"), "qwen": (qwen_vocabulary, "tiktoken")}

RELEASE_AFTER = 60.0  # seconds without a count before the loaded tokenizers leave memory


class _Idle:
    def __init__(self) -> None:
        self.last = 0.0
        self.lock = threading.Lock()
        self.releaser: threading.Thread | None = None


_idle = _Idle()


def _in_use() -> None:
    """A tokenizer was just loaded or taken: one thread waits until none has been used for
    ``RELEASE_AFTER`` seconds, releases them, and ends (it sleeps to the deadline; no polling)."""
    _idle.last = time.monotonic()
    with _idle.lock:
        if _idle.releaser is None:
            _idle.releaser = threading.Thread(target=_release_when_idle, name="tokenizers-release", daemon=True)
            _idle.releaser.start()


def _release_when_idle() -> None:
    while True:
        with _idle.lock:
            left = _idle.last + RELEASE_AFTER - time.monotonic()
            if left <= 0:
                release_tokenizers()
                _idle.releaser = None
                return
        time.sleep(left)


def release_tokenizers() -> None:
    """Drop the loaded tokenizers and give their memory back to the system (a counter still held
    keeps its own until it is dropped; the next count loads them again)."""
    _mistral_tokenizer.cache_clear()
    _qwen_encoding.cache_clear()
    gc.collect()
    sysmetrics.give_back_heap()


@lru_cache(maxsize=None)
def tokenizer_available(name: str) -> bool:
    """Installed (its file and library found, nothing loaded: a released tokenizer stays released)."""
    if name not in _FILES:
        return False
    file, library = _FILES[name]
    try:
        return file() is not None and importlib.util.find_spec(library) is not None
    except (ImportError, ValueError):
        return False


def mistral_available() -> bool:
    return tokenizer_available("mistral")


def qwen_available() -> bool:
    return tokenizer_available("qwen")


def tokenizer_of(model: str, setting: str | None) -> str:
    """The counter for an alias: a tokenizer's name, or ``estimate``. ``auto`` reads the model's name:
    Qwen 1 to 3 and QwQ share one vocabulary; Ollama's ``mistral``/``mixtral`` are Mistral 7B and 8x7B (v3 and
    v1 sentencepiece; Nemo, Small and Large use another tokenizer and are estimated)."""
    name = model.lower().rsplit("/", 1)[-1]
    wanted = setting or "auto"
    if wanted == "auto":
        base = name.split(":", 1)[0]
        wanted = ("qwen" if base.startswith(("qwen", "qwq"))
                  else "mistral" if base in ("mistral", "mixtral") or base.startswith("mistral-7b") else ESTIMATE)
    return wanted if wanted in _TOKENIZERS and tokenizer_available(wanted) else ESTIMATE


def base_counter(name: str) -> Counter:
    """The uncalibrated counter of that name (``tokenizer_of``)."""
    return _TOKENIZERS[name][0]() if name in _TOKENIZERS else Estimate()


def longest_head(text: str, tokens: int, counter: Counter, suffix: str = "") -> str:
    """The longest head of ``text`` that, with ``suffix`` after it, counts at most ``tokens``."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if counter.text(text[:mid] + suffix) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def count_texts(counter: Counter, messages: list[Message], tools: list[ToolSchema] | None = None) -> int:
    """The request's text as the counter counts it, without the template's overhead."""
    return sum(counter.text(t) for t in request_texts(messages, tools))


def count_request(counter: Counter, messages: list[Message], tools: list[ToolSchema] | None = None) -> int:
    return count_texts(counter, messages, tools) + overhead(messages, tools)
