"""Fitting context into the model's window: by priority, then by section, never over the limit.

The limit is the alias's ``num_ctx`` less the answer's reserve (``num_predict``). Items are
taken most important first (``context.Priority``). An item that does not fit whole gives its
most relevant sections that do (``relevance``), shown in document order; only a piece with no
sections to choose from (a step's output, a note without headings) is cut, at a paragraph.
What was left out is listed for the model with how to fetch it, and journaled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from routine.errors import ContextTooSmall
from routine.models.tokens import Counter, longest_head
from routine.vault.context_items import ContextItem, Dropped

ITEM_OVERHEAD = 6        # "## label", blank lines around an item
REPEAT_CHARS = 80        # a paragraph this long, already given in an earlier piece, is not sent again
MIN_USEFUL_TOKENS = 120  # below this, a cut piece is noise: leave it out whole


@dataclass(frozen=True)
class Kept:
    """One piece of context as the model sees it."""

    label: str
    text: str
    source: str | None
    order: int


@dataclass
class Fitted:
    kept: list[Kept]
    dropped: list[Dropped] = field(default_factory=list)


def fit(items: list[ContextItem], fixed_tokens: int, limit: int, counter: Counter) -> Fitted:
    """Keep what fits in ``limit`` beside ``fixed_tokens`` (system prompt, task, instructions,
    tool schemas). The fixed part is never cut: if it alone does not fit, that is an error the
    person must see, not a silently truncated task."""
    budget = limit - fixed_tokens
    if budget < 0:
        raise ContextTooSmall(
            f"The system prompt, task and tools need about {fixed_tokens} tokens, more than the {limit} "
            f"the model's window leaves after its answer.",
            "shorten the agent's prompt or the task, or raise `num_ctx` for the model alias in routine.yaml.",
        )
    out = Fitted([])
    for priority in sorted({item.priority for item in items}, reverse=True):
        budget -= _take_tier([item for item in items if item.priority == priority], budget, counter, out)
    out.kept.sort(key=lambda k: k.order)
    out.kept = _without_repeats(out.kept)
    return out


def _without_repeats(kept: list[Kept]) -> list[Kept]:
    """Each long paragraph once: one that an earlier piece already gave (two agent notes sharing
    their QA rules) is replaced by a pointer to it, which only frees room, never takes more."""
    seen: dict[str, str] = {}
    out = []
    for piece in kept:
        paragraphs = re.split(r"(\n\s*\n)", piece.text)
        for i in range(0, len(paragraphs), 2):
            key = " ".join(paragraphs[i].split())
            if len(key) < REPEAT_CHARS:
                continue
            if key in seen:
                paragraphs[i] = f"[the same paragraph as in {seen[key]}, above]"
            else:
                seen[key] = piece.label
        text = "".join(paragraphs)
        out.append(piece if text == piece.text else replace(piece, text=text))
    return out


def _take_tier(tier: list[ContextItem], budget: int, counter: Counter, out: Fitted) -> int:
    """Items of one priority: all whole when they fit; else each gets an equal share of the room,
    the smaller ones whole and what they leave going to the larger ones, which give their most
    relevant sections: no item of the tier (a day of the week under review) is left out because
    of where it was listed, and no one whole note crowds out the rest."""
    costs = {id(item): counter.text(item.label) + ITEM_OVERHEAD + counter.text(item.render()) for item in tier}
    if sum(costs.values()) <= budget:
        return sum(_take(item, budget, counter, out) for item in sorted(tier, key=lambda it: it.order))
    used, trimmed = _shares(sorted(tier, key=lambda it: (costs[id(it)], it.order)), budget, counter, out)
    if trimmed and used < budget:  # room the smaller ones left: the trimmed ones share it, once more
        for item in trimmed:
            used -= _undo(item, out, counter)
        again, _ = _shares(trimmed, budget - used, counter, out)
        used += again
    return used


def _shares(items: list[ContextItem], budget: int, counter: Counter, out: Fitted) -> tuple[int, list[ContextItem]]:
    """Each of ``items`` (smallest first) takes what fits of an equal share of what is left: the
    tokens used, and the items that did not come whole."""
    used, trimmed = 0, []
    for left, item in zip(range(len(items), 0, -1), items):
        before = len(out.dropped)
        used += _take(item, (budget - used) // left, counter, out)
        if len(out.dropped) > before:
            trimmed.append(item)
    return used, trimmed


def _undo(item: ContextItem, out: Fitted, counter: Counter) -> int:
    """Take ``item`` back out of ``out``; the tokens it had used."""
    kept = [k for k in out.kept if k.order == item.order and k.label == item.label]
    out.kept = [k for k in out.kept if k not in kept]
    out.dropped = [d for d in out.dropped if not (d["label"] == item.label and d["source"] == item.source)]
    return sum(counter.text(k.label) + ITEM_OVERHEAD + counter.text(k.text) for k in kept)


def _take(item: ContextItem, budget: int, counter: Counter, out: Fitted) -> int:
    """Add ``item`` (or what of it fits) to ``out``; returns the tokens it used."""
    label_cost = counter.text(item.label) + ITEM_OVERHEAD
    whole = item.render()
    if not whole:
        return 0
    cost = label_cost + counter.text(whole)
    if cost <= budget:
        out.kept.append(Kept(item.label, whole, item.source, item.order))
        return cost
    room = budget - label_cost - counter.text(item.properties)
    if len(item.sections) > 1 and room > 0:
        keep = _best_sections(item, room, counter)
        if keep:
            text = item.render(keep)
            left = [s.heading or "(top)" for i, s in enumerate(item.sections) if i not in keep]
            out.kept.append(Kept(item.label, text, item.source, item.order))
            out.dropped.append(_dropped(item, "sections left out for length: " + ", ".join(left)))
            return label_cost + counter.text(text)
    if room >= MIN_USEFUL_TOKENS:
        text = _cut(whole, room, counter)
        out.kept.append(Kept(item.label, text, item.source, item.order))
        out.dropped.append(_dropped(item, f"cut: the last {len(whole) - len(text)} characters left out for length"))
        return label_cost + counter.text(text)
    out.dropped.append(_dropped(item, "left out: no room in the context window"))
    return 0


def _best_sections(item: ContextItem, room: int, counter: Counter) -> list[int]:
    ranked = sorted(range(len(item.sections)), key=lambda i: -item.scores[i] if item.scores else i)
    keep, used = [], 0
    for i in ranked:
        cost = counter.text(item.sections[i].render()) + 2
        if used + cost <= room:
            keep.append(i)
            used += cost
    return keep


def _cut(text: str, room: int, counter: Counter) -> str:
    """The head of ``text`` that fits ``room`` tokens, ended at a paragraph or line if one is near."""
    note = "\n\n[… the rest left out for length]"
    head = longest_head(text, room, counter, note)
    for sep in ("\n\n", "\n"):
        at = head.rfind(sep)
        if at > len(head) * 0.6:
            head = head[:at]
            break
    return head.rstrip() + note


def _dropped(item: ContextItem, reason: str) -> Dropped:
    return {"label": item.label, "source": item.source, "reason": reason}
