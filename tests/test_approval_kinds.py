"""Every kind of write target's approved proposal lands (``vault/approvals._LANDS``, beside the
writer's ``_Writer.KINDS``): a new ``WriteKind`` fails here until its approval is declared too."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from routine.errors import RoutineError
from routine.vault.approvals import apply, read_proposal
from routine.vault.targets import WriteKind, WriteTarget
from routine.vault.writer import Provenance, write_output

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)
TARGETS = {
    WriteKind.NOTE: WriteTarget(note="Notes/Fresh.md"),
    WriteKind.SECTION: WriteTarget(note="Notes/Day.md", section="Plan"),
    WriteKind.APPEND: WriteTarget(append="Notes/Log.md"),
}


def proposed(vault, kind: WriteKind) -> str:
    target = TARGETS.get(kind)
    assert target is not None, f"a {kind.value} target is new: give it a target here and its landing in _LANDS"
    prov = Provenance("strategist", "ollama_chat/mistral", "run-1", NOW)
    result = write_output(vault, target, "- The approved words.", prov, ["Notes/**"], approval_required=True)
    assert result.proposal_rel is not None
    return result.proposal_rel


@pytest.mark.parametrize("kind", list(WriteKind))
def test_an_approved_proposal_of_every_kind_of_write_lands_in_its_target(tmp_path, kind):
    (tmp_path / "Notes").mkdir()
    proposal = read_proposal(tmp_path, proposed(tmp_path, kind))
    assert proposal is not None and proposal.kind is kind
    applied = apply(tmp_path, proposal, ["Notes/**"], NOW)
    assert applied.ok, applied.message
    assert "The approved words." in (tmp_path / TARGETS[kind].dest).read_text()


def test_a_kind_typed_by_hand_that_routine_does_not_write_is_refused_in_one_sentence(tmp_path):
    (tmp_path / "Notes").mkdir()
    rel = proposed(tmp_path, WriteKind.APPEND)
    path = tmp_path / rel
    path.write_text(re.sub(r"(?m)^kind: .*$", "kind: prepend", path.read_text(), count=1))
    proposal = read_proposal(tmp_path, rel)
    assert proposal is not None
    with pytest.raises(RoutineError) as refused:
        apply(tmp_path, proposal, ["Notes/**"], NOW)
    assert "`kind: prepend`" in refused.value.message and "note, section, append" in refused.value.fix
    assert not (tmp_path / "Notes" / "Log.md").exists()  # never applied as another kind
