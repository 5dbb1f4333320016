"""The grounding check measured on the labelled corpus (bench/grounding_corpus/: two realistic vaults,
the shipped agents, replies written as a 7B model writes them): at most 2% of grounded replies held,
at least 95% of unsupported claims caught, and at least 90% of each kind (`make bench-grounding`
prints the same figures per kind and per form)."""

from __future__ import annotations

from grounding_corpus import KINDS, replies, score


def test_the_corpus_is_what_the_goals_are_measured_on():
    corpus = replies()
    grounded = [r for r in corpus if r.kind is None]
    unsupported = [r for r in corpus if r.kind is not None]
    assert len(corpus) >= 200 and len(grounded) >= 100 and len(unsupported) >= 100
    assert {r.kind for r in unsupported} == set(KINDS)
    assert len({r.vault for r in corpus}) >= 2
    assert len({r.agent for r in corpus}) == 8  # every shipped agent


def test_grounded_replies_land_and_unsupported_claims_are_caught():
    scores = score()
    held = [f"{j.reply.vault}/{j.reply.id}: {[f.line() for f in j.findings]}" for j in scores.grounded if j.held]
    assert scores.held_share <= 0.02, held
    missed = [f"{j.reply.vault}/{j.reply.id} ({kind}) {j.reply.claim}" for kind, judged in scores.unsupported.items()
              for j in judged if not j.caught]
    assert scores.caught_share() >= 0.95, missed
    for kind in KINDS:
        assert scores.caught_share(kind) >= 0.90, (kind, missed)
