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

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from routine.templating import literal
from routine.config.model import AgentSpec, WriteSpec
from routine.errors import UsageError
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
from routine.prompts import template
from routine.verdicts import REVIEW_FORM, verdict_of
from routine.projects.model import project_folder_of
from routine.vault.scope import glob_literal

DEFAULT_REVIEWERS = ("critic", "guardian")
MAX_CITED = 12  # cited notes put in a review's context (fitted to the window like any input)
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
    run_id: str | None
    verdict: str            # pass | fail
    findings: list[str] = field(default_factory=list)


@dataclass
class QAResult:
    artifact: str
    passed: bool
    reviews: list[Review]
    promoted: bool

    def summary(self) -> dict:
        return {"artifact": self.artifact, "verdict": "passed" if self.passed else "failed", "promoted": self.promoted,
                "reviews": [{"reviewer": r.reviewer, "run": r.run_id, "verdict": r.verdict, "findings": r.findings}
                            for r in self.reviews]}


def checklist_for(artifact: Artifact, tags) -> list[str]:
    words = (artifact.name + " " + " ".join(str(t) for t in (tags or []))).lower()
    extra = [item for key, items in CHECKLISTS.items() if key in words for item in items]
    return GENERIC + extra


def parse_review(text: str) -> tuple[str, list[str]]:
    """(pass | fail, the findings): the verdict as ``verdict_of`` reads it (the one reader), the
    findings the bullets after the Findings label. Anything but PASS counts as a fail."""
    said = verdict_of(text)
    at = (text or "").upper().find("FINDINGS")
    after = text[at + len("FINDINGS"):] if at >= 0 else (text or "")
    findings = [line.strip().lstrip("-*• ").strip() for line in after.splitlines()
                if line.strip().startswith(("-", "* ", "•")) and line.strip().lstrip("-*• ").strip()]
    if said is None:
        findings.insert(0, "the reviewer's answer gave no VERDICT line, so it counts as a fail")
    elif said not in ("pass", "fail"):
        findings.insert(0, f"the reviewer's verdict was {said!r}, not PASS or FAIL, so it counts as a fail")
    return ("pass" if said == "pass" else "fail"), findings


def run_qa(config, agents: dict[str, AgentSpec], runner, rel: str, now: datetime,
           reviewers: tuple[str, ...] = ()) -> QAResult:
    from routine.vault.notes import read_note

    vault = Path(config.vault)
    try:
        note = read_note(vault, rel)
    except OSError as exc:
        raise UsageError(f"{rel} could not be read for QA ({exc.strerror or exc}).",
                         "check that the note is there and readable, then run QA again.") from exc
    artifact = _reviewable(rel, note.frontmatter)
    folder = project_folder_of(rel) or str(Path(rel).parent.as_posix())
    from routine.projects.model import find_project

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


def _reviewable(rel: str, props: dict) -> Artifact:
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


def _review(config, runner, agents, name: str, artifact: Artifact, note, qa_note: str, project) -> Review:
    from routine.config.loader import agent_named
    from routine.runner.step import StepRequest

    agent = agent_named(agents, [], name)
    text = note.body.strip()
    cited = _cited_inputs(config, agent, artifact, note.frontmatter, text, qa_note)
    # The reviewer reads the artifact and what it cites, and writes only its review; it never touches the artifact.
    request = StepRequest(agent=agent, review=(artifact.rel, qa_note), task=template("qa_review.md.j2"),
                          write=WriteSpec(note=literal(qa_note), section=Path(agent.source).stem),
                          inputs=cited, trigger=f"qa:{artifact.rel}",
                          variables={"artifact": artifact.rel[:-3], "artifact_type": artifact.artifact_type.value,
                                     "answer_form": REVIEW_FORM, "cited": len(cited),
                                     "checklist": checklist_for(artifact, note.frontmatter.get("tags")),
                                     "text": text},
                          details={"qa": artifact.rel, **({"project": project.name} if project else {})})
    outcome = runner.run_step(request)
    if outcome.error is not None:
        return Review(Path(agent.source).stem, outcome.run_id, "fail", [f"the review did not run: {outcome.error}"])
    verdict, findings = parse_review(outcome.output)
    return Review(Path(agent.source).stem, outcome.run_id, verdict, findings)


def _cited_inputs(config, agent: AgentSpec, artifact: Artifact, props: dict, text: str,
                  qa_note: str) -> tuple[str, ...]:
    """The notes ``text`` of the artifact cites that the reviewer may read (``routine.access``,
    the one resolver, as the review runs), as the step's inputs: literal paths, never templates."""
    from routine.access import resolve

    scope = resolve(config, agent, review=(artifact.rel, qa_note))
    cited = [rel for rel in cited_notes(Path(config.vault), artifact.rel, props, text) if scope.may_read(rel)]
    return tuple(literal(glob_literal(rel)) for rel in cited[:MAX_CITED])


def _record(vault: Path, artifact: Artifact, reviews: list[Review], passed: bool, qa_note: str, now: datetime) -> None:
    from routine.vault import Provenance, WriteTarget, write_output

    lines = [
        f"**Verdict: {'passed' if passed else 'failed'}** ({now:%Y-%m-%d %H:%M}), reviews in [[{qa_note[:-3]}]]",
        "",
    ]
    for review in reviews:
        lines.append(f"- {review.reviewer}: {review.verdict} (run `{review.run_id}`)")
        lines += [f"    - {finding}" for finding in review.findings]
    prov = Provenance(agent="qa", model="", run=",".join(r.run_id or "" for r in reviews), generated=now)
    write_output(vault, WriteTarget(note=artifact.rel, section="QA"), "\n".join(lines) + "\n", prov, [artifact.rel])
    updates: dict[str, object] = {"qa": QAState.PASSED.value if passed else QAState.FAILED.value,
               "qa_runs": [r.run_id for r in reviews if r.run_id]}
    if passed:
        updates.update(artifact.retyped(ArtifactType.INFORMATION_PRODUCT))
        updates["qa_sha"] = body_sha(vault, artifact.rel)
    elif artifact.artifact_type == ArtifactType.INFORMATION_PRODUCT:
        updates.update(artifact.retyped(ArtifactType.INTELLECTUAL))
    set_properties(vault, artifact.rel, updates)
