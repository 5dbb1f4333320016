"""The labelled grounding corpus (bench/grounding_corpus/): each reply checked as its agent's step
would check it, and the results per kind — for bench/grounding.py and tests/test_grounding_corpus.py.

The corpus has parts: the tuned part (the ``*.yaml`` files at the top, which the check was tuned
on) and held-out parts (each ``heldout-*/`` folder: replies written by someone who had not read the
check, scored as written and never edited by tuning). Every part is read by the same loader
(``replies``); a held-out part's files name the same vaults (a vault folder of the part itself is
used first, else the top one's).

A reply is checked with the grounds its step has: the notes it was shown (as the prompt shows a
note: its link as a heading, then its text) and the notes its shipped agent may read. A grounded
reply is held when the check finds anything in it; an unsupported reply's claim is caught when a
finding names it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "bench" / "grounding_corpus"
AGENTS = REPO / "vault_templates" / "Agents"
KINDS = ("link", "figure", "derived", "date", "person", "project")


@dataclass(frozen=True)
class Reply:
    vault: str
    id: str
    agent: str
    text: str
    shown: tuple[str, ...]
    today: date
    kind: str | None = None     # None: grounded
    claim: str | None = None    # the one unsupported claim, as written
    forms: tuple[str, ...] = ()
    root: Path = CORPUS          # the folder the vault is in


@dataclass
class Judged:
    reply: Reply
    findings: list
    found_in: dict

    @property
    def held(self) -> bool:
        return bool(self.findings)

    @property
    def caught(self) -> bool:
        claim = (self.reply.claim or "").lower()
        return any(claim in f.claim.lower() or f.claim.lower() in claim for f in self.findings)


@dataclass
class Scores:
    grounded: list[Judged] = field(default_factory=list)
    unsupported: dict[str, list[Judged]] = field(default_factory=lambda: defaultdict(list))

    @property
    def held_share(self) -> float:
        return sum(j.held for j in self.grounded) / max(1, len(self.grounded))

    def caught_share(self, kind: str | None = None) -> float:
        judged = self.unsupported[kind] if kind else [j for js in self.unsupported.values() for j in js]
        return sum(j.caught for j in judged) / max(1, len(judged))


TUNED = "tuned"


def parts(corpus: Path = CORPUS) -> dict[str, Path]:
    """The corpus's parts, by name: the tuned part (``corpus`` itself) and each held-out part
    (a ``heldout-*`` folder in it), in order."""
    held_out = sorted(p for p in corpus.glob("heldout-*") if p.is_dir())
    return {TUNED: corpus, **{p.name: p for p in held_out}}


def replies(part: Path = CORPUS, corpus: Path | None = None) -> list[Reply]:
    """The replies of one part of the corpus (its ``*.yaml`` files; held-out folders are parts of
    their own). ``corpus``: where a vault the part names lies when the part has no folder of that
    name (default: the part's parent for a held-out part, else the part)."""
    corpus = corpus or (part.parent if part.name.startswith("heldout-") else part)
    out = []
    for path in sorted(part.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        shown, today = data.get("shown") or {}, data["today"]
        root = part if (part / data["vault"]).is_dir() else corpus
        grounded = {g["id"]: g for g in data.get("grounded") or []}
        for g in data.get("grounded") or []:
            out.append(Reply(data["vault"], g["id"], g["agent"], g["text"], tuple(g.get("shown") or shown[g["agent"]]),
                             today, forms=tuple(g.get("forms") or ()), root=root))
        for u in data.get("unsupported") or []:
            text = u.get("text") or grounded[u["base"]]["text"].rstrip("\n") + "\n" + u["add"] + "\n"
            out.append(Reply(data["vault"], u["id"], u["agent"], text, tuple(u.get("shown") or shown[u["agent"]]),
                             today, u["kind"], u["claim"], root=root))
    return out


def agent_reads(agent: str) -> list[str]:
    from routine.vault.frontmatter import split_frontmatter

    return list(split_frontmatter((AGENTS / f"{agent.title()}.md").read_text())[0]["reads"])


def judge(reply: Reply) -> Judged:
    from routine.vault.grounding import grounds_for, review
    from routine.vault.notes import wikilink_for
    from routine.vault.scope import in_scope

    vault = reply.root / reply.vault
    shown = [f"## {wikilink_for(rel)}\n{(vault / rel).read_text()}" for rel in reply.shown]
    grounds = grounds_for(vault, partial(in_scope, agent_reads(reply.agent)), shown, reply.today, skip=("Drafts",))
    checked = review(reply.text, grounds, "lenient")  # the shipped agents' strictness
    return Judged(reply, checked.findings, checked.found_in)


def score(part: Path = CORPUS, corpus: Path | None = None) -> Scores:
    scores = Scores()
    for reply in replies(part, corpus):
        judged = judge(reply)
        if reply.kind is None:
            scores.grounded.append(judged)
        else:
            scores.unsupported[reply.kind].append(judged)
    return scores
