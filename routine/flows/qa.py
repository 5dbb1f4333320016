"""QA: an intellectual artifact becomes an information product only when it passes.

Each reviewer (the Critic and the Guardian by default; `--by` names others) runs as an
ordinary step, journaled with the project, checking the artifact against a checklist suited
to it and writing its review to `<case file>/QA/<artifact>.md`. routine — not the reviewers —
then records the verdict, findings and runs in the artifact: a `QA` section, `qa:`, and on a
pass its type `information-product` (in the note's own form: `type: Information Product` for
`type: Intellectual`, `artifact_type:` beside `type: artifact`) with `qa_sha`, the hash of the text that passed (an
edit afterwards sets `qa: needed` again, see ``artifacts.mark_needs_qa``). A reply without a
clear verdict counts as a fail: nothing unchecked is promoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from routine.access import resolve
from routine.config.loader import agent_named
from routine.config.model import AgentSpec, WriteSpec
from routine.errors import UsageError
from routine.flows.review_parts import Part, split_for_review
from routine.jsonvalue import JSONObject, Parsed
from routine.projects.artifacts import (
    VOCABULARY,
    Artifact,
    ArtifactType,
    QAState,
    artifact_from,
    body_sha,
    cited_notes,
    set_properties,
)
from routine.projects.model import find_project, project_folder_of
from routine.prompts import template
from routine.runner.request import StepRequest
from routine.vault import Provenance, WriteTarget, write_output
from routine.vault.notes import read_note
from routine.vault.provenance import person_text
from routine.vault.scope import glob_literal
from routine.verdicts import REVIEW_FORM, Form, verdict_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    from routine.config.model import Config
    from routine.projects.model import Project
    from routine.runner.step import Runner
    from routine.vault.notes import Note

DEFAULT_REVIEWERS = ("critic", "guardian")
_BLANK_RUNS = re.compile(r"\n{3,}")
MAX_CITED = 12  # cited notes put in a review's context (fitted to the window like any input)
# A long artifact is reviewed in parts: each takes at most this share of what the window leaves
# beside the fixed prompt (the rest is for the notes it cites), less the line saying which part.
TEXT_SHARE, PART_NOTE_TOKENS, MIN_PART_TOKENS, MAX_PARTS = 0.6, 64, 300, 20
GENERIC = [
    "It does what its title and the task that asked for it say",
    "Every claim is supported by a linked note or marked as an assumption",
    "Nothing essential is missing, and there are no placeholders or TODOs",
    "It is clear to its reader: structure, length, plain words",
]
# A word in the artifact's name or tags -> the checks that suit that kind of product.
CHECKLISTS = {
    "report": [
        "The question it answers is stated first",
        "Findings cite their sources",
        "Conclusions follow from the findings",
    ],
    "plan": ["Each step has an owner and a date", "Risks and dependencies are named", "It serves a key result"],
    "blueprint": ["Components and their interfaces are named", "Constraints (hardware, budget) are respected"],
    "script": [
        "It runs as written (commands, paths, versions are real)",
        "Destructive steps carry a warning",
        "How to test it is stated",
    ],
    "software": ["It runs as written", "Inputs, outputs and errors are handled", "How to test it is stated"],
}


@dataclass
class Review:
    reviewer: str
    run_id: str | None      # its (last) run
    verdict: str            # pass | fail: a fail if any part failed
    findings: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)             # every run: one per part of a long artifact
    failed_sections: list[str] = field(default_factory=list)  # the sections of the parts that failed


@dataclass
class QAResult:
    artifact: str
    passed: bool
    reviews: list[Review]
    promoted: bool

    def summary(self) -> JSONObject:
        return {"artifact": self.artifact, "verdict": "passed" if self.passed else "failed", "promoted": self.promoted,
                "reviews": [{"reviewer": r.reviewer, "run": r.run_id, "runs": r.runs, "verdict": r.verdict,
                             "findings": r.findings, "failed_sections": r.failed_sections}
                            for r in self.reviews]}


def checklist_for(artifact: Artifact, tags: Iterable[object] | None) -> list[str]:
    words = (artifact.name + " " + " ".join(str(t) for t in (tags or []))).lower()
    extra = [item for key, items in CHECKLISTS.items() if key in words for item in items]
    return GENERIC + extra


def parse_review(text: str) -> tuple[str, list[str]]:
    """(pass | fail, the findings): the verdict as ``verdict_of`` reads it (the one reader), the
    findings the bullets after the Findings label. Anything but PASS counts as a fail."""
    said = verdict_of(text, Form.BOLD)
    at = (text or "").upper().find("FINDINGS")
    after = text[at + len("FINDINGS"):] if at >= 0 else (text or "")
    findings = [line.strip().lstrip("-*• ").strip() for line in after.splitlines()
                if line.strip().startswith(("-", "* ", "•")) and line.strip().lstrip("-*• ").strip()]
    if said is None:
        findings.insert(0, "the reviewer's answer gave no VERDICT line, so it counts as a fail")
    elif said not in ("pass", "fail"):
        findings.insert(0, f"the reviewer's verdict was {said!r}, not PASS or FAIL, so it counts as a fail")
    return ("pass" if said == "pass" else "fail"), findings


def run_qa(config: Config, agents: dict[str, AgentSpec], runner: Runner, rel: str, now: datetime,
           reviewers: tuple[str, ...] = ()) -> QAResult:
    vault = Path(config.vault)
    try:
        note = read_note(vault, rel)
    except OSError as exc:
        raise UsageError(f"{rel} could not be read for QA ({exc.strerror or exc}).",
                         "check that the note is there and readable, then run QA again.") from exc
    artifact = _reviewable(rel, note.frontmatter)
    folder = project_folder_of(rel) or str(Path(rel).parent.as_posix())

    project = find_project(vault, folder.split("/", 1)[-1])
    names = reviewers or tuple(r for r in DEFAULT_REVIEWERS if r in agents)
    if not names:
        raise UsageError("No reviewer agent is loaded (the Critic and the Guardian are the default).",
                         "restore Agents/Critic.md, or name reviewers with --by AGENT.")
    qa_note = f"{folder}/QA/{artifact.name}.md"
    reviews = [_review(config, runner, agents, name, artifact, note, qa_note, project) for name in names]
    passed = all(r.verdict == "pass" for r in reviews)
    promoted = passed and artifact.artifact_type == ArtifactType.INTELLECTUAL
    _record(vault, artifact, reviews, passed, qa_note, now)
    return QAResult(rel, passed, reviews, promoted or (passed and artifact.artifact_type ==
                                                      ArtifactType.INFORMATION_PRODUCT))


def _reviewable(rel: str, props: Parsed) -> Artifact:
    """The artifact QA may promote, or one sentence saying which property to set (in the
    person's words: `type: intellectual`)."""
    artifact = artifact_from(rel, props)
    if artifact is None:
        others = VOCABULARY.replace(f"{ArtifactType.INTELLECTUAL.spoken}, ", "")
        declared = props.get("type")
        has = f"its `type:` is {str(declared)!r}" if declared not in (None, "") else "it has no `type:` property"
        raise UsageError(f"{rel} is not an artifact ({has}).",
                         f"{'set' if declared not in (None, '') else 'add'} `type: intellectual` (or {others}) "
                         "in its properties.")
    if artifact.artifact_type == ArtifactType.COGNITIVE:
        key, value = next(iter(artifact.retyped(ArtifactType.INTELLECTUAL).items()))
        raise UsageError(f"{rel} is a cognitive artifact (a thinking tool); QA promotes intellectual ones.",
                         f"set `{key}: {value}` if it is a product.")
    return artifact


def _review(config: Config, runner: Runner, agents: dict[str, AgentSpec], name: str, artifact: Artifact, note: Note,
            qa_note: str, project: Project | None) -> Review:
    """One reviewer's review: the artifact whole, or part by part when it is longer than the
    reviewer's window holds (a fail if any part fails, its sections named)."""
    agent = agent_named(agents, [], name)
    reviewer = Path(agent.source).stem
    # What the person's artifact says: routine's sections in it (its QA verdicts) are not reviewed.
    text = _BLANK_RUNS.sub("\n\n", person_text(artifact.rel, note.body)).strip()
    parts = _parts(runner, _request(config, agent, artifact, note, qa_note, project, Part(text, ()), ""), text)
    if len(parts) > MAX_PARTS:
        return Review(reviewer, None, "fail", [f"it is too long to review: {len(parts)} parts of {reviewer}'s window, "
                                               f"more than {MAX_PARTS}; split it into smaller notes"])
    review = Review(reviewer, None, "pass")
    for i, part in enumerate(parts, 1):
        where = f"part {i} of {len(parts)}" if len(parts) > 1 else ""
        outcome = runner.run_step(_request(config, agent, artifact, note, qa_note, project, part, where))
        review.run_id = outcome.run_id or review.run_id
        review.runs += [outcome.run_id] if outcome.run_id else []
        if outcome.error is not None:
            verdict, findings = "fail", [f"the review did not run: {outcome.error}"]
        else:
            verdict, findings = parse_review(outcome.output)
        review.findings += [f"{part.label}: {f}" for f in findings] if where else findings
        if verdict == "fail":
            review.verdict = "fail"
            review.failed_sections += list(part.sections) if where else []
    return review


def _request(config: Config, agent: AgentSpec, artifact: Artifact, note: Note, qa_note: str, project: Project | None,
             part: Part, where: str) -> StepRequest:
    """The review step of ``part`` (``where``: "part 2 of 5", or "" for the artifact whole)."""
    cited = _cited_inputs(config, agent, artifact, note.frontmatter, part.text, qa_note)
    section = Path(agent.source).stem + (f" ({where})" if where else "")
    # The reviewer reads the artifact and what it cites, and writes only its review; it never touches the artifact.
    return StepRequest(agent=agent, review=(artifact.rel, qa_note), task=template("qa_review.md.j2"),
                       # names from the vault are values, never part of a template
                       write=WriteSpec(note="{{ qa_note }}", section="{{ reviewer }}"),
                       inputs=tuple(f"{{{{ cited_{i} }}}}" for i in range(len(cited))), trigger=f"qa:{artifact.rel}",
                       variables={"qa_note": qa_note, "reviewer": section,
                                  **{f"cited_{i}": rel for i, rel in enumerate(cited)},
                                  "artifact": artifact.rel[:-3], "artifact_type": artifact.artifact_type.value,
                                  "answer_form": REVIEW_FORM, "cited": len(cited),
                                  "part": f"{where}, holding {part.label}" if where else "",
                                  "checklist": checklist_for(artifact, note.frontmatter.get("tags")),
                                  "text": part.text},
                       details={"qa": artifact.rel, **({"part": where} if where else {}),
                                **({"project": project.name} if project else {})})


def _parts(runner: Runner, request: StepRequest, text: str) -> list[Part]:
    """``text`` in the parts the reviewer's window holds beside what its prompt never cuts
    (system prompt, task, tool schemas: a dry run of the review counts them with the model's
    own counter), leaving room for the notes the artifact cites."""
    probe = runner.run_step(replace(request, inputs=(), variables={**request.variables, "text": ""}), dry_run=True)
    if probe.prompt is None:  # not even the empty review fits: the review itself says why
        return [Part(text, ())]
    room = probe.prompt.limit - probe.prompt.reserved - probe.prompt.fixed
    budget = int(room * TEXT_SHARE) - PART_NOTE_TOKENS
    if budget < MIN_PART_TOKENS:
        return [Part(text, ())]
    return split_for_review(text, budget, runner.models.counter(request.agent.model))


def _cited_inputs(config: Config, agent: AgentSpec, artifact: Artifact, props: Parsed, text: str,
                  qa_note: str) -> tuple[str, ...]:
    """The notes ``text`` of the artifact cites that the reviewer may read (``routine.access``,
    the one resolver, as the review runs): literal in a glob, the step's inputs as values, never templates."""
    scope = resolve(config, agent, review=(artifact.rel, qa_note))
    cited = [rel for rel in cited_notes(Path(config.vault), artifact.rel, props, text) if scope.may_read(rel)]
    return tuple(glob_literal(rel) for rel in cited[:MAX_CITED])


def _record(vault: Path, artifact: Artifact, reviews: list[Review], passed: bool, qa_note: str, now: datetime) -> None:
    """The verdict in the artifact's `QA` section and in the QA note's `Verdict` section (the
    failing sections of a long artifact named), and its properties."""
    lines = [
        f"**Verdict: {'passed' if passed else 'failed'}** ({now:%Y-%m-%d %H:%M}), reviews in [[{qa_note[:-3]}]]",
        "",
    ]
    for review in reviews:
        said = ", ".join(f"`{run}`" for run in review.runs) or f"`{review.run_id}`"
        lines.append(f"- {review.reviewer}: {review.verdict} (run{'s' if len(review.runs) > 1 else ''} {said})")
        if review.failed_sections:
            lines.append("    - failed in: " + ", ".join(f"§ {name}" for name in review.failed_sections))
        lines += [f"    - {finding}" for finding in review.findings]
    runs = [run for r in reviews for run in (r.runs or ([r.run_id] if r.run_id else []))]
    prov = Provenance(agent="qa", model="", run=runs[-1] if runs else "", generated=now)  # every run: `qa_runs`
    text = "\n".join(lines) + "\n"
    write_output(vault, WriteTarget(note=artifact.rel, section="QA"), text, prov, [artifact.rel])
    write_output(vault, WriteTarget(note=qa_note, section="Verdict"), text, prov, [qa_note])
    updates: dict[str, object] = {"qa": QAState.PASSED.value if passed else QAState.FAILED.value, "qa_runs": runs}
    if passed:
        updates.update(artifact.retyped(ArtifactType.INFORMATION_PRODUCT))
        updates["qa_sha"] = body_sha(vault, artifact.rel)
    elif artifact.artifact_type == ArtifactType.INFORMATION_PRODUCT:
        updates.update(artifact.retyped(ArtifactType.INTELLECTUAL))
    set_properties(vault, artifact.rel, updates)
