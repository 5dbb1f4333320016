"""Blocks chained ``after:`` another: a review that runs when the work it reviews is written.

A chained block has no time of its own (its cron is ``Cron.never``): each run of the block it
follows that ended well — or, with ``step``, in which that step wrote — runs it once, its steps
seeing that step's output as ``{{ steps.STEP.output }}``. Chains are checked at load: the block
and step they name must exist, and no chain may come back to where it started.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from routine.config.yamlfile import LocatedYaml, PathKey
from routine.errors import Problem
from routine.jsonvalue import Parsed
from routine.schedule.cron import Cron
from routine.schedule.model import Block, Chain


def parse(doc: LocatedYaml, here: PathKey, raw: Parsed, problems: list[Problem]) -> Chain | None:
    """A block's ``after:``, or None for a block fired by its cron. A block needs one of the two."""
    after = raw.get("after")
    has_cron = isinstance(raw.get("cron"), str)
    if after is None:
        if not has_cron:
            problems.append(doc.problem(here, "a block needs `cron:` (when it runs) or `after:` (the block whose "
                                              "runs it follows)."))
        return None
    if has_cron:
        problems.append(doc.problem(here + ("after",), "a block runs either by `cron:` or `after:` another block, "
                                                      "not both; remove one."))
    if not isinstance(after, dict) or not isinstance(after.get("block"), str):
        return None  # the schema says what is wrong with its shape
    step = after.get("step")
    return Chain(after["block"], step if isinstance(step, str) else None, doc.line(here + ("after",)))


def never(chain: Chain) -> Cron:
    return Cron.never(f"after {chain.describe()}")


def problems(blocks: Iterable[tuple[Block, Path]]) -> list[Problem]:
    """Every chain that names a block or step that does not exist, or that returns to itself."""
    where = {b.id: (b, path) for b, path in blocks}
    found = []
    for block, path in where.values():
        chain = block.after
        if chain is None:
            continue
        at = f"blocks.{block.id}.after"
        target = where.get(chain.block)
        if target is None:
            found.append(Problem(str(path), chain.line, at, f"no block named {chain.block!r} to follow"
                                 + (f" (blocks: {', '.join(sorted(where))})." if where else ".")))
        elif chain.step is not None and chain.step not in target[0].agents:
            found.append(Problem(str(path), chain.line, at, f"block {chain.block!r} has no step {chain.step!r} "
                                 f"(its steps: {', '.join(target[0].agents)})."))
        loop = _loop(block.id, {b.id: b for b, _ in where.values()})
        if loop:
            found.append(Problem(str(path), chain.line, at, f"this chain comes back to itself ({' after '.join(loop)}),"
                                 " so it would run for ever; remove one of these `after:`."))
    return found


def _loop(start: str, blocks: Mapping[str, Block]) -> list[str]:
    """``start`` and the blocks it follows, back round to ``start``; empty when it does not loop."""
    seen = [start]
    current = blocks.get(start)
    while current is not None and current.after is not None:
        nxt = current.after.block
        if nxt == start:
            return [*seen, start]
        if nxt in seen:
            return []  # a loop further up, reported at its own blocks
        seen.append(nxt)
        current = blocks.get(nxt)
    return []


def followers(blocks: Mapping[str, Block], block_id: str, wrote: Sequence[str], ended_well: bool) -> list[Block]:
    """The blocks to run now that a run of ``block_id`` has ended: those that follow the block
    (when it ended well) or one of ``wrote``, the agents of its steps that wrote (a branch not
    taken, or a step that failed, is not among them)."""
    return [b for b in blocks.values()
            if b.enabled and b.after is not None and b.after.block == block_id
            and (b.after.step in wrote if b.after.step is not None else ended_well)]
