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


# A pilot project of the size a new user has (two people, two agents, five tasks, two artifacts, notes
# and research around them) and a second project sharing a person and an agent: the canvases' legibility
# is measured on it (tests/test_graph_layout.py, bench/graph.py).
PILOT = {
    "Projects/Orin Pilot/Orin Pilot.md": """\
        ---
        type: project
        goal: Run a paid pilot of the Orin sensor with three farms
        status: active
        key_results: ["[[OKRs#KR 1.1]]", "[[OKRs#KR 1.2]]"]
        manager: "[[Mara]]"
        members: ["[[Mara]]", "[[Tomas]]", "[[Pricer]]", "[[Scout]]"]
        ---
        # Orin Pilot
        The pilot is priced in [[Pricing model]] and planned in [[Pilot plan]]; see [[Kickoff]].
        - [ ] Confirm the budget with finance before the farms sign [assignee:: [[Mara]]] 📅 2026-12-04
        """,
    "Projects/Orin Pilot/Tasks.md": """\
        # Tasks
        - [ ] Draft a price sheet for three pilot farms, with a discount for a season-long commitment \
[assignee:: [[Pricer]]] [result:: [[Pricing model]]] 📅 2026-12-01
        - [ ] Call the two farms from the trade fair and ask what they pay for soil tests today \
[assignee:: [[Tomas]]] 📅 2026-11-30
        - [x] Scan competitors' sensor prices [assignee:: [[Scout]]] [result:: [[Market scan]]]
        - [ ] Write the pilot plan: which fields, which weeks, who visits [assignee:: [[Tomas]]] \
[result:: [[Pilot plan]]]
        - [ ] Review the pilot plan against the budget [assignee:: [[Mara]]]
        """,
    "Projects/Orin Pilot/Pricing model.md": """\
        ---
        type: artifact
        artifact_type: intellectual
        owner: "[[Pricer]]"
        shared_with: ["[[Mara]]"]
        derived_from: ["[[Market scan]]", "[[Interview notes]]"]
        status: draft
        qa: needed
        ---
        Three tiers.
        """,
    "Projects/Orin Pilot/Pilot plan.md": """\
        ---
        type: artifact
        artifact_type: cognitive
        owner: "[[Tomas]]"
        derived_from: ["[[Pricing model]]", "[[Field map]]"]
        status: draft
        ---
        Fields and weeks.
        """,
    "Projects/Orin Pilot/Kickoff.md": "---\ntype: decision\n---\nWe start with [[Farm Lindqvist]].\n",
    "Projects/Orin Pilot/Risks.md": "Weather; see [[Field map]] and [[Weather]].\n",
    "Projects/Orin Pilot/Price decision.md": "---\ntype: decision\nsources: [\"[[Pricing model]]\"]\n---\nTier two.\n",
    "Projects/Orin Pilot/Visit schedule.md": "---\nsources: [\"[[Farm list]]\"]\n---\nTuesdays.\n",
    "Research/Weather.md": "Rain.\n",
    "Research/Lab list.md": "Labs.\n",
    "Projects/Orin Pilot/Budget.md": "---\nsources: [\"[[Pricing model]]\", \"[[Soil test prices]]\"]\n---\nNumbers.\n",
    "Projects/Orin Pilot/Farm list.md": "---\nsources: [\"[[Farm Lindqvist]]\", \"[[Farm Okafor]]\"]\n---\nFarms.\n",
    "Projects/Orin Pilot/Meeting 2026-11-18.md": "---\nattendees: [\"[[Mara]]\", \"[[Tomas]]\"]\n---\n"
                                                 "We looked at [[Budget]].\n",
    "Projects/Orin Pilot/Questions for farms.md": "---\nsources: [\"[[Interview notes]]\"]\n---\nAsk.\n",
    "Research/Soil test prices.md": "---\nsources: [\"[[Lab list]]\"]\n---\nLabs charge.\n",
    "Research/Farm Okafor.md": "A farm.\n",
    "Research/Market scan.md": "---\nsources: [\"[[Sensor datasheet]]\"]\n---\nCompetitors.\n",
    "Research/Interview notes.md": "What farmers said.\n",
    "Research/Field map.md": "Fields.\n",
    "Research/Sensor datasheet.md": "Specs.\n",
    "Research/Farm Lindqvist.md": "A farm.\n",
    "People/Mara.md": "---\ntype: person\nrole: founder\n---\n",
    "People/Tomas.md": "---\ntype: person\nrole: field sales\n---\n",
    "People/Ines.md": "---\ntype: person\nrole: engineer\n---\n",
    "Agents/Pricer.md": "---\nagent: pricer\nmodel: general\ncustom: true\nwrite: {append: Agents/Pricer/Log.md}\n"
                        "---\nYou price.\n",
    "Agents/Pricer/Log.md": "---\nagent: pricer\n---\n## 2026-11-20\nPriced [[Orin Pilot]].\n",
    "Agents/Scout.md": "---\nagent: scout\nmodel: general\n---\nYou scout.\n",
    "Plans/OKRs.md": """\
        # OKRs
        ## Objective 1: Prove farms pay for Orin
        - KR 1.1: three paid pilots — current 0 / target 3
        - KR 1.2: a price farms accept — current 0 / target 1
        ## Objective 2: A sensor that lasts a season
        - KR 2.1: battery for 120 days — current 40 / target 120
        """,
    "Projects/Battery/Battery.md": """\
        ---
        type: project
        status: active
        key_results: ["[[OKRs#KR 2.1]]"]
        manager: "[[Ines]]"
        members: ["[[Ines]]", "[[Scout]]", "[[Tomas]]"]
        ---
        # Battery
        - [ ] Measure the drain of the radio at each send interval [assignee:: [[Ines]]]
        - [ ] Compare three cell suppliers on price and lead time [assignee:: [[Scout]]]
        - [ ] Ask the field team how often the sensors must report [assignee:: [[Tomas]]]
        - [x] Order sample cells [assignee:: [[Ines]]]
        """,
    "Daily/2026-11-20.md": "Worked on [[Orin Pilot]] with [[Tomas]].\n"
                           "- [ ] Send Mara the trade-fair list [assignee:: [[Tomas]]]\n",
    "Daily/2026-11-22.md": "- [ ] Ask [[Scout]] for the lab prices for [[Orin Pilot]] [assignee:: [[Scout]]]\n",
    "Daily/2026-11-23.md": "- [ ] Renew the lab account [assignee:: [[Ines]]]\n",
    "Daily/2026-11-24.md": "- [ ] Call the insurer about the van [assignee:: [[Tomas]]]\n",
    "Daily/2026-11-25.md": "- [ ] Pay the trade-fair invoice [assignee:: [[Mara]]]\n",
    "Daily/2026-11-26.md": "- [ ] Back up the field laptops [assignee:: [[Ines]]]\n",
    "Daily/2026-11-27.md": "- [ ] Sort the sensor returns [assignee:: [[Tomas]]]\n",
    "Daily/2026-11-21.md": "- [ ] Book the farm visit for [[Orin Pilot]] [assignee:: [[Mara]]] 📅 2026-12-02\n",
}


OTHER_PROJECTS = {  # more projects for the workspace: name -> (manager, members, tasks as (text, assignee))
    "Website": ("Mara", ["Mara", "Pricer"], [("Write the pilot page", "Mara"), ("Price table for the page", "Pricer"),
                                           ("Photos from the fields", "Tomas"), ("Contact form", "Mara"),
                                           ("A page per farm that joins the pilot", "Tomas"),
                                           ("Fix the footer", "Mara")]),
    "Hiring": ("Mara", ["Mara", "Ines"], [("Job post for a field engineer", "Mara"), ("Screen the applicants", "Ines"),
                                         ("Book interviews", "Mara"), ("A trial day in the field", "Ines"),
                                         ("Reference calls", "Mara")]),
    "Grants": ("Ines", ["Ines", "Scout"], [("Find the regional farm-tech grants", "Scout"),
                                           ("Draft the application", "Ines"), ("Budget annex", "Ines"),
                                           ("Letters of support from two farms", "Tomas")]),
    "Field kit": ("Tomas", ["Tomas", "Ines", "Scout"], [
        ("Pack list for a farm visit", "Tomas"), ("Spare sensors and mounts", "Ines"),
        ("A printed one-page guide for farmers", "Scout"), ("Charge the demo tablets", "Tomas"),
        ("Check the van's booking", "Tomas"), ("Waterproof boxes for the gateways", "Ines")]),
    "Sales": ("Mara", ["Mara", "Tomas", "Pricer"], [
        ("List the co-ops in the region", "Tomas"), ("Quote for the Okafor farm", "Pricer"),
        ("Follow up the fair's leads", "Tomas"), ("A discount rule for co-ops", "Pricer"),
        ("Demo call with the Lindqvist farm", "Mara"), ("Send the contract draft", "Mara"),
        ("Update the lead list", "Tomas"), ("Thank-you notes after visits", "Mara")]),
}


def pilot_notes() -> dict[str, str]:
    notes = dict(PILOT)
    for name, (manager, members, tasks) in OTHER_PROJECTS.items():
        links = ", ".join(f'"[[{m}]]"' for m in members)
        notes[f"Projects/{name}/{name}.md"] = (f"---\ntype: project\nstatus: active\nmanager: \"[[{manager}]]\"\n"
                                               f"members: [{links}]\n---\n# {name}\n")
        notes[f"Projects/{name}/Tasks.md"] = "# Tasks\n" + "".join(
            f"- [ ] {text} [assignee:: [[{who}]]]\n" for text, who in tasks)
    return notes


def write_pilot(vault: Path) -> None:
    for rel, text in pilot_notes().items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


# A café project of 27 cards with a hub: a note that links to every artifact and everyone in the
# project, which the artifacts derive from (a "map of content" a newcomer keeps). Its tasks are in
# the project note, so the project links to each of them too. The canvas's crossings are measured
# on it (tests/test_graph_hub.py, bench/graph.py); two of the person's own agents work in it.
HUB_PROJECT = {
    "Projects/Harbor/Harbor.md": """\
        ---
        type: project
        goal: Open the harbour café by spring
        status: active
        key_results: ["[[OKRs#KR 1.1]]"]
        manager: "[[Lena]]"
        members: ["[[Lena]]", "[[Jonas]]", "[[Pricer]]", "[[Scout]]"]
        ---
        # Harbor
        Everything starts at [[Harbor hub]].
        - [ ] Sign the lease [assignee:: [[Scout]]] [result:: [[Lease]]]
        - [ ] Draft the menu with prices [assignee:: [[Scout]]] [result:: [[Menu]]]
        - [ ] Find three coffee suppliers [assignee:: [[Lena]]] [result:: [[Supplier list]]]
        - [ ] Plan the fit-out with the builder [assignee:: [[Pricer]]] [result:: [[Fit-out plan]]]
        - [ ] Work out the opening budget [assignee:: [[Scout]]] [result:: [[Opening budget]]]
        """,
    "Projects/Harbor/Harbor hub.md": "The hub: [[Menu]], [[Opening budget]], [[Fit-out plan]], [[Supplier list]], "
                                     "[[Lease]], [[Lena]], [[Jonas]], [[Pricer]], [[Scout]].\n",
    "Projects/Harbor/Menu.md": "---\ntype: artifact\nartifact_type: intellectual\nowner: \"[[Pricer]]\"\n"
                               "derived_from: [\"[[Lease]]\", \"[[Harbor hub]]\"]\n---\nDrinks and cakes.\n",
    "Projects/Harbor/Opening budget.md": "---\ntype: artifact\nartifact_type: intellectual\nowner: \"[[Pricer]]\"\n"
                                         "derived_from: [\"[[Lease]]\", \"[[Harbor hub]]\"]\n---\nNumbers.\n",
    "Projects/Harbor/Fit-out plan.md": "---\ntype: artifact\nartifact_type: intellectual\nowner: \"[[Jonas]]\"\n"
                                       "derived_from: [\"[[Opening budget]]\", \"[[Harbor hub]]\"]\n---\nWalls.\n",
    "Projects/Harbor/Supplier list.md": "---\ntype: artifact\nartifact_type: intellectual\nowner: \"[[Jonas]]\"\n"
                                        "derived_from: [\"[[Fit-out plan]]\", \"[[Harbor hub]]\"]\n---\nBeans.\n",
    "Projects/Harbor/Lease.md": "---\ntype: decision\n---\nSee [[Harbor hub]].\n",
    "People/Lena.md": "---\ntype: person\n---\n",
    "People/Jonas.md": "---\ntype: person\n---\n",
    "Plans/OKRs.md": "# OKRs\n## Objective 1: Open the café\n- KR 1.1: open by March — current 0 / target 1\n",
}
HUB_AGENTS = {"Agents/Pricer.md": "---\nagent: pricer\nmodel: general\n---\nYou price.\n",
              "Agents/Scout.md": "---\nagent: scout\nmodel: general\n---\nYou scout.\n"}


def write_hub_project(vault: Path) -> None:
    for rel, text in {**HUB_PROJECT, **HUB_AGENTS}.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
