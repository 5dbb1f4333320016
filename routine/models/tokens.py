"""Counting a request's tokens before it is sent, so no request ever exceeds the window.

What is counted is what is really sent: every message (content and tool calls), the tool
schemas, and the chat template's overhead per message. Two ways to count:

- ``tokenizer: mistral`` on a model alias: Mistral's own tokenizer (PyPI ``mistral-common``),
  exact and offline.
- otherwise an estimate that errs high: digits and punctuation count one token each (Llama and
  Mistral tokenizers split digits), other non-ASCII characters two (an emoji five: byte
  fallback), letters and spaces ``chars_per_token`` characters a token.
  It starts from a conservative default and is calibrated per model from what the server
  reports it evaluated (``prompt_eval_count``), kept in the journal (``token_samples``).

Ollama's count can be lower than the truth when it reuses a cached prompt prefix, so the
calibration takes the *smallest* characters-per-token seen lately: cached requests only make a
sample look cheaper, and the least cheap one is the honest one.
"""

from __future__ import annotations

import json
import math
import string
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mistral_common.tokens.tokenizers.base import Tokenizer

    from routine.journal.token_samples import TokenSamples

DEFAULT_CHARS_PER_TOKEN = 3.2  # letters and spaces; with the rest counted apart, Mistral errs ≤ 4% above
MIN_CHARS_PER_TOKEN, MAX_CHARS_PER_TOKEN = 1.5, 4.5
CALIBRATION_SAFETY = 0.95      # the calibrated ratio is lowered by 5%: count a little high
MIN_SAMPLES = 3                # until then the default stands
SAMPLE_WINDOW = 50             # the calibration looks at the latest samples only
MESSAGE_OVERHEAD = 8           # role markers and template tokens around each message
REQUEST_OVERHEAD = 16          # BOS, the generation prompt, a system-prompt wrapper
TOOLS_OVERHEAD = 24            # the template's wrapper around the tool schemas


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


def request_texts(messages: list[dict], tools: list[dict] | None = None) -> list[str]:
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


def overhead(messages: list[dict], tools: list[dict] | None) -> int:
    return REQUEST_OVERHEAD + MESSAGE_OVERHEAD * len(messages) + (TOOLS_OVERHEAD if tools else 0)


class Counter(Protocol):
    exact: bool

    def text(self, text: str) -> int: ...


class Estimate:
    """Characters per token, from the journal's samples of this model (else the default)."""

    exact = False

    def __init__(self, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN):
        self.chars_per_token = chars_per_token

    def text(self, text: str) -> int:
        return shape_of(text).tokens(self.chars_per_token)


class MistralTokens:
    """Mistral's tokenizer (sentencepiece, shipped inside ``mistral-common``): exact, offline."""

    exact = True

    def __init__(self) -> None:
        self._raw = _mistral_tokenizer()

    def text(self, text: str) -> int:
        if not text:
            return 0
        try:
            return len(self._raw.encode(text, bos=False, eos=False))
        except (RuntimeError, UnicodeError):  # lone surrogates (a name that is not UTF-8) cannot be cast
            return len(self._raw.encode(text.encode("utf-8", "backslashreplace").decode("utf-8"), bos=False, eos=False))


@lru_cache(maxsize=1)
def _mistral_tokenizer() -> Tokenizer:
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    return MistralTokenizer.v3().instruct_tokenizer.tokenizer


def mistral_available() -> bool:
    try:
        _mistral_tokenizer()
    except Exception:  # not installed, or its sentencepiece extra missing
        return False
    return True


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


def count_request(counter: Counter, messages: list[dict], tools: list[dict] | None = None) -> int:
    return sum(counter.text(t) for t in request_texts(messages, tools)) + overhead(messages, tools)


class Calibration:
    """Per model: the characters a token, learned from what the server says it evaluated.

    ``store`` persists samples (``routine.journal.token_samples.TokenSamples``); without one
    (a test, a dry run without state) the samples live only in memory.
    """

    def __init__(self, store: TokenSamples | None = None) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._ratios: dict[str, list[float]] = {}

    def counter(self, model: str, tokenizer: str | None) -> Counter:
        if tokenizer == "mistral" and mistral_available():
            return MistralTokens()
        return Estimate(self.chars_per_token(model))

    def chars_per_token(self, model: str) -> float:
        ratios = self._load(model)
        if len(ratios) < MIN_SAMPLES:
            return DEFAULT_CHARS_PER_TOKEN
        return min(MAX_CHARS_PER_TOKEN, max(MIN_CHARS_PER_TOKEN, min(ratios) * CALIBRATION_SAFETY))

    def record(self, model: str, messages: list[dict], tools: list[dict] | None, reported: int | None) -> None:
        """One request and the prompt tokens the server reported for it."""
        if not reported:
            return
        shapes = [shape_of(t) for t in request_texts(messages, tools)]
        fixed = sum(s.fixed for s in shapes) + overhead(messages, tools)
        chars = sum(s.chars for s in shapes)
        rest = reported - fixed
        if chars < 200 or rest <= 0:
            return  # too small to tell anything, or a cached prefix hid most of it
        ratio = chars / rest
        with self._lock:
            ratios = self._load(model)
            ratios.append(ratio)
            del ratios[:-SAMPLE_WINDOW]
        if self.store is not None:
            self.store.add(model, chars, fixed, reported)

    def _load(self, model: str) -> list[float]:
        if model not in self._ratios:
            rows = self.store.recent(model, SAMPLE_WINDOW) if self.store is not None else []
            self._ratios[model] = [chars / (reported - fixed) for chars, fixed, reported in rows
                                   if reported > fixed]
        return self._ratios[model]
