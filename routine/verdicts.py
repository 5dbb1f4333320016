"""A verdict in an answer, read in one place: QA's PASS or FAIL and a conditional handoff's
`when: {verdict: …}` both call ``verdict_of``.

The form every prompt asks for is one line, ``**Verdict:** WORD — one sentence why`` (the
shipped reviewers' agent notes and the QA task say it in the same words, ``REVIEW_FORM``);
older and looser forms are read too: ``VERDICT: ok``, ``**Verdict** — `OK`, because…``,
``VERDICT: **PASS**``. The last verdict line counts.
"""

from __future__ import annotations

import re

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


def verdict_of(text: str | None) -> str | None:
    """The verdict the last verdict line of ``text`` states, lower case with single spaces
    ("pass", "needs review"); None when no line states one."""
    found = [value for value in _LINE.findall(text or "") if value.strip(_MARKUP)]
    if not found:
        return None
    value = found[-1].strip()
    quoted = _QUOTED.match(value)
    if quoted:
        value = quoted.group(2)
    else:
        value = _REASON.split(value, maxsplit=1)[0]
    words = " ".join(value.strip(_MARKUP).lower().split())
    return words or None
