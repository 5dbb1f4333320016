"""Is a model's reply fit to be written? Cut off, empty, chat-template debris and runaway
repetition are not: such a reply is retried once, else the run fails and the note is untouched.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from enum import Enum

# Chat-template control tokens of the common families (ChatML, Llama 3, Mistral, Gemma, Phi).
CONTROL_TOKEN = re.compile(
    r"<\|(?:im_start|im_end|endoftext|eot_id|start_header_id|end_header_id|begin_of_text|end_of_text"
    r"|assistant|user|system|end|eom_id)\|>"
    r"|<(?:start_of_turn|end_of_turn|eos|bos|pad)>|\[/?INST\]|</?s>|\[/?AVAILABLE_TOOLS\]|\[TOOL_CALLS\]")
MIN_REPETITION_CHARS = 400   # shorter replies are not judged for repetition
COMPRESSION_FLOOR = 0.12     # zlib shrinks prose to ~0.4–0.6; a loop to under 0.1
REPEATED_LINE_SHARE = 0.5    # half the lines one and the same line


class ReplyProblem(Enum):
    CUT_OFF = "cut off at the answer's token limit"
    EMPTY = "empty"
    CONTROL_TOKENS = "chat-template control tokens instead of text"
    REPETITION = "degenerate repetition"
    PROMPT_CUT = "made from a prompt the server cut to fit its window"

    @property
    def retry_helps(self) -> bool:
        return self is not ReplyProblem.PROMPT_CUT


def strip_trailing_control(text: str) -> str:
    """A stop token leaked at the very end is harmless: drop it (and only it)."""
    stripped = text.rstrip()
    while True:
        last = None
        for last in CONTROL_TOKEN.finditer(stripped):  # noqa: B007  (the last match is kept)
            pass
        if last is None or last.end() != len(stripped):
            return stripped
        stripped = stripped[:last.start()].rstrip()


def problem_with(text: str, finish_reason: str | None) -> ReplyProblem | None:
    """The first reason ``text`` must not be written, or None when it is fit."""
    if finish_reason == "length":
        return ReplyProblem.CUT_OFF
    body = strip_trailing_control(text).strip()
    if not body:
        return ReplyProblem.CONTROL_TOKENS if CONTROL_TOKEN.search(text) else ReplyProblem.EMPTY
    if CONTROL_TOKEN.search(body):
        return ReplyProblem.CONTROL_TOKENS
    if _degenerate(body):
        return ReplyProblem.REPETITION
    return None


def _degenerate(text: str) -> bool:
    if len(text) < MIN_REPETITION_CHARS:
        return False
    data = text.encode("utf-8")
    if len(zlib.compress(data, 6)) / len(data) < COMPRESSION_FLOOR:
        return True
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) < 6:
        return False
    _, most = Counter(lines).most_common(1)[0]
    return most >= 5 and most / len(lines) >= REPEATED_LINE_SHARE
