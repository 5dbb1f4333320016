"""Benchmark: how far the grounding check can be trusted, on a labelled corpus.

The corpus (bench/grounding_corpus/: two realistic vaults, replies of the shipped agents written as
a 7B model writes them; tests/grounding_corpus.py reads and scores it): grounded replies that
paraphrase the notes (rounding, remaining counts, percent of target, days until a date, dates in
words, first names, short links, amounts, a figure from a note the agent may read but was not
shown, units, ranges, tables, lists, headings) and replies with exactly one unsupported claim
(a link, a figure, a derived figure, a date, a person, a project). Printed: per kind the share of
unsupported claims caught and of grounded replies held for a claim of that kind, per form the share
of grounded replies held, and the goals (at most 2% held; at least 95% caught, 90% of each kind).
Exit status 1 when a goal is missed.

    make bench-grounding        # or: .venv/bin/python bench/grounding.py [--verbose]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from grounding_corpus import KINDS, score  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verbose", action="store_true", help="name each reply held and each claim missed")
    args = ap.parse_args()
    start = time.perf_counter()
    scores = score()
    took = time.perf_counter() - start
    total = len(scores.grounded) + sum(len(v) for v in scores.unsupported.values())
    print(f"{total} replies checked in {took:.2f} s ({took / total * 1000:.1f} ms each)\n")
    grounded = len(scores.grounded)
    print(f"{'kind of claim':<16}{'unsupported':>12}{'caught':>8}{'grounded held for one':>24}")
    for kind in KINDS:
        judged = scores.unsupported[kind]
        held = sum(any(f.kind == kind for f in j.findings) for j in scores.grounded)
        print(f"{kind:<16}{len(judged):>12}{scores.caught_share(kind):>8.0%}{held / grounded:>24.1%}")
    unsupported = sum(len(v) for v in scores.unsupported.values())
    print(f"{'all':<16}{unsupported:>12}{scores.caught_share():>8.0%}{scores.held_share:>24.1%}\n")
    forms: dict[str, list] = defaultdict(list)
    for judged in scores.grounded:
        for form in judged.reply.forms or ("(none)",):
            forms[form].append(judged)
    print(f"{'grounded form':<24}{'replies':>8}{'held':>7}")
    for form, judged in sorted(forms.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"{form:<24}{len(judged):>8}{sum(j.held for j in judged) / len(judged):>7.0%}")
    print(f"{'all grounded':<24}{len(scores.grounded):>8}{scores.held_share:>7.1%}\n")
    if args.verbose:
        for j in scores.grounded:
            if j.held:
                print(f"held {j.reply.vault}/{j.reply.id}: " + "; ".join(f.line() for f in j.findings))
        for kind, judged in scores.unsupported.items():
            for j in judged:
                if not j.caught:
                    print(f"missed {j.reply.vault}/{j.reply.id} ({kind}): {j.reply.claim}")
    met = (scores.held_share <= 0.02 and scores.caught_share() >= 0.95
           and all(scores.caught_share(k) >= 0.90 for k in KINDS))
    print("goals (≤ 2% of grounded held; ≥ 95% caught, ≥ 90% of each kind): " + ("met" if met else "MISSED"))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
