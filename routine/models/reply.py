"""Is a model's reply fit to be written? Cut off, empty, chat-template debris and runaway
repetition are not: such a reply is retried once, else the run fails and the note is untouched.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from enum import Enum

# Chat-template control tokens, the exact strings of each family. The `<|…|>` tokens (ChatML, Llama 3,
# Phi) never occur in prose: anywhere outside code they are debris, whatever the model (a fine-tune
# may use another family's template). The others read like markup or words (`<s>` is HTML
# strikethrough, `[INST]` is mentioned in sentences): they count only for their model family
# (``family_of``), and only where a template puts them (``_markers``).
PIPE_TOKENS = ("im_start", "im_end", "endoftext", "eot_id", "start_header_id", "end_header_id", "begin_of_text",
               "end_of_text", "assistant", "user", "system", "end", "eom_id", "python_tag")
FAMILY_TOKENS = {
    "mistral": ("<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_CALLS]",
                "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"),
    "llama2": ("<s>", "</s>", "[INST]", "[/INST]", "<<SYS>>", "<</SYS>>"),
    "gemma": ("<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "<pad>"),
    "chatml": (), "llama3": (), "phi": (),  # their tokens are all `<|…|>`
}
# A template's turn: an opening token at a line's start, its closing one at the line's end.
TURNS = (("[INST]", "[/INST]"), ("<<SYS>>", "<</SYS>>"), ("[TOOL_RESULTS]", "[/TOOL_RESULTS]"),
         ("[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]"), ("[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"),
         ("<start_of_turn>", "<end_of_turn>"))
# A token that opens what only a template writes: a role after Gemma's turn, a JSON list after tool calls.
OPENERS = ((r"<start_of_turn>", r"(?:user|model)\b"), (r"\[TOOL_CALLS\]", r"\s*\["))
_FAMILY_NAMES = (("gemma", "gemma"), ("mixtral", "mistral"), ("mistral", "mistral"), ("ministral", "mistral"),
                 ("codestral", "mistral"), ("llama2", "llama2"), ("llama-2", "llama2"), ("qwen", "chatml"),
                 ("llama3", "llama3"), ("llama-3", "llama3"), ("phi", "phi"))
_PIPE = re.compile(r"<\|(?:" + "|".join(PIPE_TOKENS) + r")\|>")
_STRIKETHROUGH = re.compile(r"<s>(?!\s*\[/?INST\])[^<\n]*</s>")
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)


def family_of(model: str | None) -> str | None:
    """The chat-template family of a model name (``ollama_chat/mistral:7b…`` → mistral); None if unknown."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    return next((family for key, family in _FAMILY_NAMES if key in name), None)


def _family_tokens(model: str | None) -> tuple[str, ...]:
    family = family_of(model)
    if family is None:  # unknown: every family's, still only where a template puts them
        return tuple(dict.fromkeys(t for tokens in FAMILY_TOKENS.values() for t in tokens))
    return FAMILY_TOKENS[family]


def _markers(model: str | None) -> re.Pattern[str]:
    """Template debris for this model: a `<|…|>` token anywhere; the family's word-like tokens only as a
    template writes them: a line of tokens alone, two tokens side by side (`</s>` then `[INST]`), a turn
    (`[INST] … [/INST]` filling a line), or an opener followed by what only a template puts there.
    A token mentioned in a sentence, even at a line's start or end, is prose."""
    tokens = _family_tokens(model)
    if not tokens:
        return _PIPE
    any_token = "(?:" + "|".join(re.escape(t) for t in tokens) + ")"
    parts = [_PIPE.pattern, rf"(?m:^[ \t]*{any_token}(?:[ \t]*{any_token})*[ \t]*$)",
             rf"{any_token}\s*{any_token}"]
    parts += [rf"(?m:^[ \t]*{re.escape(a)}[^\n]*{re.escape(b)}[ \t]*$)"
              for a, b in TURNS if a in tokens and b in tokens]
    parts += [rf"{opener}{after}" for opener, after in OPENERS if any(re.fullmatch(opener, t) for t in tokens)]
    return re.compile("|".join(parts))


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


def strip_trailing_control(text: str, model: str | None = None) -> str:
    """A stop token leaked at the very end is harmless: drop it (and only it)."""
    stripped = text.rstrip()
    ending = re.compile("(?:" + "|".join([_PIPE.pattern, *(re.escape(t) for t in _family_tokens(model))]) + r")\Z")
    while (match := ending.search(stripped)) is not None and not _closes_strikethrough(stripped):
        stripped = stripped[:match.start()].rstrip()
    return stripped


def _closes_strikethrough(text: str) -> bool:
    """``… <s>old</s>`` at the end: markup, not a stop token."""
    last = text.rsplit("\n", 1)[-1]
    return any(m.end() == len(last) for m in _STRIKETHROUGH.finditer(last))


def control_tokens(text: str, model: str | None = None) -> list[str]:
    """The template tokens in ``text`` for this model, outside code and strikethrough."""
    prose = _STRIKETHROUGH.sub(" ", _CODE.sub(" ", text))
    return [m[0].strip() for m in _markers(model).finditer(prose)]


def problem_with(text: str, finish_reason: str | None, model: str | None = None) -> ReplyProblem | None:
    """The first reason ``text`` must not be written, or None when it is fit."""
    if finish_reason == "length":
        return ReplyProblem.CUT_OFF
    body = strip_trailing_control(text, model).strip()
    if not body:
        return ReplyProblem.CONTROL_TOKENS if control_tokens(text, model) else ReplyProblem.EMPTY
    if control_tokens(body, model):
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
