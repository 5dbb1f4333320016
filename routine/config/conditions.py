"""Conditional handoffs: a step's `when:` on an earlier step's verdict or output, and `else:`, the
later step that runs instead when the condition does not hold (the person's design: "Critic ok →
Builder, needs review → Synthesizer").

A verdict is what an answer states on its verdict line (``routine.verdicts.verdict_of``, the
one reader; QA reads its PASS or FAIL there too). Pure: the schedule loader builds a
``Condition``, the block runner asks it.
"""

from __future__ import annotations

from dataclasses import dataclass

from routine.verdicts import verdict_of


@dataclass(frozen=True)
class Condition:
    step: str  # the earlier step (its agent's name)
    verdict: tuple[str, ...] = ()  # holds when the step's verdict is one of these
    contains: str | None = None  # or when its output contains this text (any case)
    otherwise: str | None = None  # `else:`: the later step that runs when this does not hold

    def holds(self, output: str | None) -> bool:
        if output is None:  # the step did not run (skipped by its own condition)
            return False
        if self.contains is not None:
            return self.contains.lower() in output.lower()
        return verdict_of(output) in self.verdict

    def describe(self) -> str:
        if self.contains is not None:
            return f"{self.step}'s output contains {self.contains!r}"
        return f"{self.step}'s verdict is {' or '.join(repr(v) for v in self.verdict)}"

    def found(self, output: str | None) -> str:
        """What the step said, for the journal: its verdict, or that it did not run."""
        if output is None:
            return f"{self.step} did not run"
        if self.contains is not None:
            return "it does" if self.holds(output) else "it does not"
        said = verdict_of(output)
        return f"it was {said!r}" if said else f"{self.step} gave no VERDICT line"
