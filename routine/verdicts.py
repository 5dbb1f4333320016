"""A verdict in an answer, read in one place: QA's PASS or FAIL and a conditional handoff's
`when: {verdict: …}` both call ``verdict_of``.

The form every prompt asks for is one line, ``**Verdict:** WORD — one sentence why`` (the
shipped reviewers' agent notes and the QA task say it in the same words, ``REVIEW_FORM``);
older and looser forms are read too: ``VERDICT: ok``, ``**Verdict** — `OK`, because…``,
``VERDICT: **PASS**``.

Only the reviewer's own words count: lines in a blockquote (``> VERDICT: ok``), a code fence or
an indented code block (four spaces after a blank line) are a quote of something else and never
a verdict. Of the rest, the last line in the form the prompt asked for counts (``Form``: the
shipped critic is asked for a plain `VERDICT: X`, QA for REVIEW_FORM's `**Verdict:** X`), so a
note quoted after the reviewer's own line in the other form cannot outvote it; only when no line
has the asked form does the last line of any form count. No such line: no verdict (None).
"""

from __future__ import annotations

import re
from enum import Enum

# What a QA reviewer writes, word for word as the task and the reviewers' agent notes ask for it.
REVIEW_FORM = (
    "**Verdict:** PASS or FAIL — one sentence why.\n"
    "**Findings**\n"
    "- one finding per line, naming the checklist item (and the section) it concerns"
)

# "Verdict", in any markup, then a colon or a dash (or a space), then the verdict and maybe why.
_LINE = re.compile(r"^[\W_]*verdict(?:[*_`]*[ \t]*[:—–-]+|[*_`]*[ \t])[ \t]*(.*?)[ \t]*$",
                   re.IGNORECASE | re.MULTILINE)
_QUOTED = re.compile(r"^(\*\*|`|_)(.+?)\1")
# Where the verdict ends and the reason begins: a dash, a comma, a semicolon, a full stop.
_REASON = re.compile(r"\s[—–-]+\s|[—–]|[,;:(]|\.(?:\s|$)")
_MARKUP = "*_`'\". \t"
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]")


class Form(Enum):
    """The verdict line a prompt asks for."""

    PLAIN = re.compile(r"^VERDICT:", re.IGNORECASE)  # `VERDICT: ok` (the shipped critic, a `when: {verdict: …}`)
    BOLD = re.compile(r"^\*\*Verdict:\*\*", re.IGNORECASE)  # `**Verdict:** PASS — why` (REVIEW_FORM, QA)


def own_lines(text: str) -> list[str]:
    """The lines of ``text`` outside blockquotes, code fences and indented code blocks (four
    spaces or a tab after a blank line, not under a list item): the writer's own words."""
    lines: list[str] = []
    fence, code, blank, after = "", False, True, ""  # after: the last line of the writer's that was not blank
    for line in text.splitlines():
        opened, empty = _FENCE.match(line), not line.strip()
        indented = not empty and line.expandtabs(4).startswith("    ")
        if fence:
            mark = opened[1] if opened else ""
            if mark[:1] == fence[0] and len(mark) >= len(fence) and not line.strip()[len(mark):]:
                fence = ""
        elif code and (empty or indented) or indented and blank and not _LIST_ITEM.match(after):
            code = True
        elif opened:
            fence, code = opened[1], False
        else:
            code = False
            if not line.lstrip().startswith(">"):
                lines.append(line)
            after = line if not empty else after
        blank = empty
    return lines


def verdict_of(text: str | None, form: Form = Form.PLAIN) -> str | None:
    """The verdict the reviewer's own last verdict line of ``form`` states (else its last verdict
    line of any form), lower case with single spaces ("pass", "needs review"); None when no
    line outside quotes and code states one."""
    said = [(line.strip(), found[1]) for line in own_lines(text or "")
            if (found := _LINE.fullmatch(line.strip())) and found[1].strip(_MARKUP)]
    if not said:
        return None
    asked = [value for line, value in said if form.value.match(line)]
    value = (asked or [value for _, value in said])[-1].strip()
    quoted = _QUOTED.match(value)
    if quoted:
        value = quoted.group(2)
    else:
        value = _REASON.split(value, maxsplit=1)[0]
    words = " ".join(value.strip(_MARKUP).lower().split())
    return words or None
