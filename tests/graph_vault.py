"""A small case file for the knowledge-graph tests: two projects, people, agents, tasks and
artifacts, written directly as notes (the shared vault conventions)."""

from __future__ import annotations

import textwrap
from pathlib import Path

NOTES = {
    "Projects/Alpha/Alpha.md": """\
        ---
        type: project
        goal: Launch the consulting offer
        status: active
        key_results: ["[[OKRs#KR 1.1]]"]
        manager: "[[Planner]]"
        members: ["[[Ada]]", "[[Builder]]"]
        behaviours: ["Builder: reactive"]
        ---
        # Alpha
        The offer is described in [[Pricing page]].
        """,
    "Projects/Alpha/Tasks.md": """\
        # Tasks
        - [ ] Draft the pricing page [assignee:: [[Builder]]] 📅 2026-12-01
        - [x] Interview three clients [assignee:: [[Ada]]] [result:: [[Market research]]]
        """,
    "Projects/Alpha/Pricing page.md": """\
        ---
        type: artifact
        artifact_type: information-product
        owner: "[[Builder]]"
        shared_with: ["[[Ada]]"]
        derived_from: ["[[Market research]]"]
        status: draft
        qa: needed
        ---
        Three tiers.
        """,
    "Projects/Alpha/Market research.md": """\
        ---
        type: artifact
        artifact_type: intellectual
        owner: "[[Research]]"
        derived_from: ["[[Datasheet]]"]
        status: done
        qa: passed
        ---
        What clients said.
        """,
    "Projects/Beta/Beta.md": """\
        ---
        type: project
        goal: A battery that lasts a week
        status: active
        key_results: ["[[OKRs#KR 2.1]]"]
        manager: "[[Planner]]"
        members: ["[[Bo]]", "[[Research]]"]
        ---
        # Beta
        - [ ] Compare cell suppliers [assignee:: [[Research]]]
        - [ ] Order samples [assignee:: [[Bo]]]
        """,
    "Projects/Beta/Battery spec.md": """\
        ---
        type: artifact
        artifact_type: cognitive
        owner: "[[Bo]]"
        derived_from: ["[[Datasheet]]"]
        status: draft
        qa: none
        ---
        Spec.
        """,
    "Research/Datasheet.md": "Cell datasheet notes.\n",
    "People/Ada.md": "---\ntype: person\nrole: client lead\n---\nAda.\n",
    "People/Bo.md": "---\ntype: person\nrole: engineer\n---\nBo.\n",
    "Plans/OKRs.md": """\
        # OKRs
        ## Objective 1: Win clients
        - KR 1.1: ten paying clients — current 2 / target 10
        ## Objective 2: Better hardware
        - KR 2.1: a week of battery — current 2 d / target 7 d
        """,
    "Daily/2026-11-20.md": "Worked on [[Alpha]] with [[Ada]].\n- [ ] Email Bo [assignee:: [[Bo]]]\n",
}

AGENTS = {
    "Agents/Builder.md": '---\nagent: builder\nmodel: coder\nreads: ["Projects/**", "Research/**"]\n'
    'writes: ["Builds/**"]\ngrounding: ["[[Pricing page]]"]\n---\nYou build.\n',
    "Agents/Research.md": '---\nagent: research\nmodel: general\nreads: ["Research/**", "Projects/Beta/**"]\n'
    'writes: ["Research/**"]\n---\nYou research.\n',
    "Agents/Planner.md": '---\nagent: planner\nmodel: general\nreads: ["**"]\nwrites: ["Daily/**"]\n---\nYou plan.\n',
}


def write_case_file(vault: Path, agents: bool = True) -> None:
    notes = {**NOTES, **(AGENTS if agents else {})}
    for rel, text in notes.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
