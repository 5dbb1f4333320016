"""Which sections of a note matter most to a step, when not all of it fits.

Scores only order the sections for keeping; what is kept is shown in document order. The
section the step is rewriting (its current draft) matters most; then sections the task names
(in the singular or the plural: "the postmortems" names the Postmortem section), the day's
handoff sections (a digest, the plan, the evening log, dream seeds…), and the later sections
of a log (newest entries last).
"""

from __future__ import annotations

import re

from routine.vault.outline import Section

# Sections one block leaves for the next: what the day's routine hands on.
HANDOFF = frozenset({"digest", "alignment", "plan", "postmortem", "evening log", "dream seeds", "risks",
                     "risk review", "midday review", "triage", "morning log", "scope audit", "knowledge sync",
                     "okr review", "next week", "kr trend"})
_WORD = re.compile(r"[a-z0-9]+")


def section_scores(outline: list[Section], task: str, target_section: str | None, is_target: bool) -> list[float]:
    task_words = _words(task)
    scores = []
    for i, sec in enumerate(outline):
        heading = (sec.heading or "").lower()
        score = 0.01 * i  # later sections of a log are its newest
        if target_section and heading == target_section.lower():
            score += 100  # the draft being rewritten
        words = _words(heading)
        if words and words <= task_words:
            score += 8
        elif words & task_words - _STOP:
            score += 3
        if heading in HANDOFF:
            score += 5
        if sec.heading is None:
            score += 2  # the top of a note usually says what it is
        if is_target:
            score += 1
        scores.append(score)
    return scores


RELEVANT = 3.0  # a section the task names (a word in common) or a handoff section scores at least this


def relevant(outline: list[Section], task: str) -> list[Section]:
    """The sections of a note that matter to the task (named by it, or handed on by the day's
    routine), in document order: what a note gives when it lacks the section asked for."""
    scores = section_scores(outline, task, None, is_target=False)
    return [sec for sec, score in zip(outline, scores) if score >= RELEVANT]


def _words(text: str) -> set[str]:
    """The words of ``text``, a plural read as its singular (``reviews`` as ``review``; ``progress`` stays)."""
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in _WORD.findall(text.lower())}


_STOP = frozenset({"the", "a", "an", "and", "of", "to", "in", "for", "on", "with", "my", "i", "today", "notes", "note"})
