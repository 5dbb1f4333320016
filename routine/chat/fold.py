"""The rolling summary: the oldest turns of a conversation folded into a running summary.

When the history no longer fits its share of the window, the oldest turns go to the model with
the summary so far, and the summary it writes replaces them in later requests. Each fold request
is itself counted and kept inside the window (turns too long are cut for it), and the summary is
held to ``max_tokens``, so the question, the summary and the latest turns always fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from routine.models.tokens import Counter, count_request, longest_head
from routine.prompts import template
from routine.templating import render

MIN_FOLD = 2   # fold at least one exchange at a time
FOLD_TO = 0.6  # a fold leaves the turns this share of their room: the next few turns need no fold


@dataclass(frozen=True)
class Turn:
    role: str  # user | assistant
    content: str

    def message(self) -> dict:
        return {"role": self.role, "content": self.content}


def turn_cost(counter: Counter, turns: list[Turn]) -> int:
    return count_request(counter, [t.message() for t in turns]) if turns else 0


def how_many_to_fold(counter: Counter, turns: list[Turn], room: int) -> int:
    """0 while the turns fit ``room``; past it, the fewest oldest turns to fold so the rest take
    at most ``FOLD_TO`` of it (a fold costs a model call: not one at every turn once full)."""
    if turn_cost(counter, turns) <= room:
        return 0
    last = len(turns) - min(2, len(turns))  # the latest exchange stays whenever it fits at all
    for share in (FOLD_TO, 1.0):
        for n in range(min(MIN_FOLD, last), last + 1, 2):  # whole exchanges
            if turn_cost(counter, turns[n:]) <= room * share:
                return n
    return len(turns)


class Folder:
    """Writes the running summary with the conversation's own model."""

    def __init__(self, client, alias: str, agent: str, person: str = "the person", max_tokens: int = 400):
        self.client, self.alias, self.agent, self.person = client, alias, agent, person
        self.counter = client.counter(alias)
        self.max_tokens = max_tokens

    def fold(self, summary: str, turns: list[Turn], run_id: str | None = None) -> str:
        """The summary, rewritten to cover ``turns`` as well (in as many requests as the window needs)."""
        system = render(template("fold.md.j2"), {"person": self.person, "agent": self.agent,
                                                 "words": max(60, int(self.max_tokens * 0.6))}, "fold.md.j2").strip()
        limit = self.client.limit(self.alias)
        rest = list(turns)
        while rest:
            batch: list[Turn] = []
            while rest:
                trial = batch + [rest[0]]
                if count_request(self.counter, self._messages(system, summary, trial)) <= limit:
                    batch.append(rest.pop(0))
                    continue
                if not batch:  # one turn alone is too long: fold its head
                    room = limit - count_request(self.counter, self._messages(system, summary, [])) - 32
                    batch.append(Turn(rest[0].role, cut(rest.pop(0).content, max(room, 64), self.counter)))
                break
            answer = self.client.complete(self.alias, self._messages(system, summary, batch), run_id=run_id)
            summary = cut(answer.text.strip(), self.max_tokens, self.counter)
        return summary

    def _messages(self, system: str, summary: str, turns: list[Turn]) -> list[dict]:
        who = {"user": "Person", "assistant": self.agent.title()}
        lines = [f"**{who.get(t.role, t.role)}:** {t.content}" for t in turns]
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
