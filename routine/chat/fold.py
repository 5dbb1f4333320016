"""The rolling summary: the oldest turns of a conversation folded into a running summary.

When the history no longer fits its share of the window, the oldest turns go to the model with
the summary so far, and the summary it writes replaces them in later requests. Each fold request
is itself counted and kept inside the window (turns too long are cut for it), and the summary is
held to ``max_tokens``, so the question, the summary and the latest turns always fit.

Every turn is counted once per answer (``turn_costs``: a request's count is the sum of its
messages' plus a fixed overhead), so a conversation of thousands of turns costs thousands of
counts, not millions.
"""

from __future__ import annotations

from dataclasses import dataclass

from routine.models.client import ModelClient
from routine.models.tokens import MESSAGE_OVERHEAD, REQUEST_OVERHEAD, Counter, Message, count_request, longest_head
from routine.prompts import template
from routine.templating import render

MIN_FOLD = 2   # fold at least one exchange at a time
FOLD_TO = 0.6  # a fold leaves the turns this share of their room: the next few turns need no fold


@dataclass(frozen=True)
class Turn:
    role: str  # user | assistant
    content: str

    def message(self) -> Message:
        return {"role": self.role, "content": self.content}


def turn_cost(counter: Counter, turns: list[Turn]) -> int:
    return count_request(counter, [t.message() for t in turns]) if turns else 0


def turn_costs(counter: Counter, turns: list[Turn]) -> list[int]:
    """Each turn's share of a request's count (``turn_cost`` of a list is their sum plus
    REQUEST_OVERHEAD): counted once, summed as often as needed."""
    return [counter.text(t.content) + MESSAGE_OVERHEAD for t in turns]


def how_many_to_fold(counter: Counter, turns: list[Turn], room: int, costs: list[int] | None = None) -> int:
    """0 while the turns fit ``room``; past it, the fewest oldest turns to fold so the rest take
    at most ``FOLD_TO`` of it (a fold costs a model call: not one at every turn once full).
    ``costs``: the turns' ``turn_costs``, when the caller has them already."""
    if not turns:
        return 0
    costs = turn_costs(counter, turns) if costs is None else costs
    tail = [0] * (len(turns) + 1)  # tail[n]: what turns[n:] cost
    for i in range(len(turns) - 1, -1, -1):
        tail[i] = tail[i + 1] + costs[i]
    if tail[0] + REQUEST_OVERHEAD <= room:
        return 0
    last = len(turns) - min(2, len(turns))  # the latest exchange stays whenever it fits at all
    for share in (FOLD_TO, 1.0):
        for n in range(min(MIN_FOLD, last), last + 1, 2):  # whole exchanges
            if tail[n] + (REQUEST_OVERHEAD if n < len(turns) else 0) <= room * share:
                return n
    return len(turns)


class Folder:
    """Writes the running summary with the conversation's own model."""

    def __init__(self, client: ModelClient, alias: str, agent: str, person: str = "the person",
                 max_tokens: int = 400) -> None:
        self.client, self.alias, self.agent, self.person = client, alias, agent, person
        self.counter = client.counter(alias)
        self.max_tokens = max_tokens

    def fold(self, summary: str, turns: list[Turn], run_id: str | None = None) -> str:
        """The summary, rewritten to cover ``turns`` as well (in as many requests as the window needs)."""
        system = render(template("fold.md.j2"), {"person": self.person, "agent": self.agent,
                                                 "words": max(60, int(self.max_tokens * 0.6))}, "fold.md.j2").strip()
        limit = self.client.limit(self.alias)
        at = 0
        while at < len(turns):
            batch, at = self._batch(system, summary, turns, at, limit)
            answer = self.client.complete(self.alias, self._messages(system, summary, batch), run_id=run_id)
            summary = cut(answer.text.strip(), self.max_tokens, self.counter)
        return summary

    def _batch(self, system: str, summary: str, turns: list[Turn], at: int, limit: int) -> tuple[list[Turn], int]:
        """The turns from ``at`` that one fold request holds, and where the next batch starts.
        Each turn is counted once on its way in (its line and the blank line before it, plus a
        token of margin); the batch is then counted whole and trimmed if that was optimistic."""
        base = count_request(self.counter, self._messages(system, summary, []))
        batch: list[Turn] = []
        used = base
        while at < len(turns):
            cost = self.counter.text(self._line(turns[at])) + 3
            if used + cost > limit:
                break
            batch.append(turns[at])
            used += cost
            at += 1
        while len(batch) > 1 and count_request(self.counter, self._messages(system, summary, batch)) > limit:
            batch.pop()
            at -= 1
        if not batch:  # one turn alone is too long: fold its head
            room = limit - base - 32
            batch, at = [Turn(turns[at].role, cut(turns[at].content, max(room, 64), self.counter))], at + 1
        return batch, at

    def _line(self, turn: Turn) -> str:
        who = {"user": "Person", "assistant": self.agent.title()}
        return f"**{who.get(turn.role, turn.role)}:** {turn.content}"

    def _messages(self, system: str, summary: str, turns: list[Turn]) -> list[Message]:
        lines = [self._line(t) for t in turns]
        user = f"# Summary so far\n{summary or '(none yet)'}\n\n# Turns to fold in\n" + "\n\n".join(lines)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def cut(text: str, tokens: int, counter: Counter) -> str:
    """The head of ``text`` within ``tokens``, ended at a line or sentence when one is near."""
    if counter.text(text) <= tokens:
        return text
    head = longest_head(text, tokens, counter, " …")
    for sep in ("\n", ". "):
        at = head.rfind(sep)
        if at > len(head) * 0.6:
            head = head[:at + (1 if sep == ". " else 0)]
            break
    return head.rstrip() + " …"
