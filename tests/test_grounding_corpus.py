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


def test_held_out_parts_are_found_and_read_by_the_same_loader(tmp_path):
    """A held-out part (a heldout-* folder beside the tuned files, its own README) names the tuned
    part's vaults and is scored apart; the tuned part never takes its replies in."""
    from grounding_corpus import TUNED, parts, replies, score

    vault = tmp_path / "mini"
    (vault / "Plans").mkdir(parents=True)
    (vault / "Plans" / "OKRs.md").write_text("# OKRs\n- KR 1.1: 50 pilot signups — current 27 / target 50\n")
    (vault / "Projects" / "Lumen").mkdir(parents=True)
    (vault / "Projects" / "Lumen" / "Lumen.md").write_text("# Lumen\nLabeling: 210 of 300 tickets.\n")
    header = "vault: mini\ntoday: 2026-11-23\nshown:\n  strategist: [Plans/OKRs.md]\n"
    (tmp_path / "mini.yaml").write_text(
        header + "grounded:\n  - {id: g1, agent: strategist, text: 'KR 1.1: 27 of 50.'}\nunsupported: []\n")
    held_out = tmp_path / "heldout-x"
    held_out.mkdir()
    (held_out / "README.md").write_text("# Held out, written blind\n")
    (held_out / "mini.yaml").write_text(
        header + "grounded:\n  - {id: h1, agent: strategist, text: 'Signups: 27 of 50, so 23 to go.'}\n"
        "unsupported:\n  - {id: h2, agent: strategist, kind: figure, claim: '210', "
        "text: 'Signups are at 210 now.'}\n  - {id: h3, agent: strategist, kind: person, claim: 'Dana Whitfield', "
        "base: h1, add: 'Dana Whitfield in Legal signs.'}\n")
    assert list(parts(tmp_path)) == [TUNED, "heldout-x"]
    assert [r.id for r in replies(tmp_path)] == ["g1"]
    read = replies(held_out)
    assert [(r.id, r.kind, r.root) for r in read] == [("h1", None, tmp_path), ("h2", "figure", tmp_path),
                                                      ("h3", "person", tmp_path)]
    scores = score(held_out)
    assert scores.held_share == 0 and scores.caught_share("figure") == 1 and scores.caught_share("person") == 1
