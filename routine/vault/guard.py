"""The notes no agent writes directly, whatever its `writes:` scope, and the seal on proposals.

Agent definitions (`Agents/`), routine's configuration when it lives in the vault, and
routine's own notes (the dashboard, `Alerts/`, proposals in `Drafts/` and archived ones, the
questions to the person in `Inbox/`, whose answer no agent may give) are
the team's permissions and routine's voice. An agent whose scope covers them could otherwise
widen its own reads, inject instructions into another agent, forge an alert or approve its own
proposal. So a write there never lands: it becomes a proposal the person decides.

A proposal is a note routine made, and only routine can make one: it carries ``seal``, an HMAC
(key in the state dir, which no agent can read) over its place and what it proposes. A note an
agent wrote in `Drafts/` that looks like a proposal has no valid seal and is never applied.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from routine.atomicfile import secret_key
from routine.paths import state_dir
from routine.vault.frontmatter import parse_frontmatter
from routine.vault.notes import load_note_text
from routine.vault.provenance import PROPOSAL_TAG, QUESTIONS_FOLDER, archived_proposals, is_question_note
from routine.vault.scope import glob_match

# What the seal covers: where the proposal is and what it would do (its text may be edited by
# the person before approving, so the text is not sealed).
SEALED = ("target", "section", "kind", "base", "agent", "run")


class _Layout(Protocol):
    @property
    def agents(self) -> str: ...
    @property
    def alerts(self) -> str: ...
    @property
    def drafts(self) -> str: ...
    @property
    def archive(self) -> str: ...
    @property
    def dashboard(self) -> str: ...


class GuardedConfig(Protocol):
    """What the guard reads of the config (``routine.config.model.Config``, a layer up)."""

    @property
    def layout(self) -> _Layout: ...
    @property
    def vault(self) -> Path: ...
    @property
    def path(self) -> Path: ...
    @property
    def schedules_dir(self) -> Path: ...


@dataclass(frozen=True)
class Guard:
    """Where agents may not write directly; built from the config's layout with ``of``."""

    agents: str = "Agents"
    alerts: str = "Alerts"
    drafts: str = "Drafts"
    archive: str = "Archive"
    dashboard: str = "Routine/Dashboard.md"
    config_rels: tuple[str, ...] = ()  # routine.yaml and schedules/, when inside the vault

    @classmethod
    def of(cls, config: GuardedConfig) -> Guard:
        layout = config.layout
        return cls(agents=layout.agents, alerts=layout.alerts, drafts=layout.drafts, archive=layout.archive,
                   dashboard=layout.dashboard, config_rels=_inside(config.vault, [config.path, config.schedules_dir]))

    def why(self, vault: Path, rel: str, agent: str | None = None) -> str | None:
        """Why ``agent`` may not write ``rel`` directly (a phrase); None when it may.

        An agent's own folder (``Agents/<Name>/``: its log, its working notes) is its desk; the
        agent notes themselves and every other agent's folder are not."""
        def under(folder: str) -> bool:
            return glob_match(f"{folder.strip('/')}/**", rel)

        if under(self.agents):
            parts = rel.split("/")
            own_desk = agent is not None and len(parts) > 2 and parts[1].lower() == agent.lower()
            if not own_desk:
                return "is an agent definition" if len(parts) == 2 else "is in another agent's folder"
        if any(rel == c or rel.startswith(c + "/") for c in self.config_rels):
            return "is routine's configuration"
        if rel == self.dashboard.strip("/"):
            return "is routine's dashboard"
        if under(self.alerts):
            return "is one of routine's alerts"
        if under(archived_proposals(self.archive)):
            return "is an archived proposal"
        if under(self.drafts) and _looks_like_proposal(vault / rel):
            return "is one of routine's proposals"
        if is_question_note(rel):  # its `answer:` is the person's to give, never an agent's
            return "is one of routine's questions to you"
        return None


    def covers_folder(self, vault: Path, folder: str) -> bool:
        """True when the folder ``folder`` holds anything agents may not write directly (so it
        must not be mounted read-write in the sandbox)."""
        folder = folder.strip("/")
        owned = [self.agents, self.alerts, self.drafts, archived_proposals(self.archive), self.dashboard,
                 f"{QUESTIONS_FOLDER}/Question q-", *self.config_rels]
        return any(o.strip("/") == folder or o.strip("/").startswith(folder + "/") for o in owned) \
            or self.why(vault, folder + "/file.md") is not None


def _inside(vault: Path, paths: list[Path]) -> tuple[str, ...]:
    root = os.path.realpath(vault)
    out = []
    for path in paths:
        real = os.path.realpath(path)
        if real.startswith(root.rstrip(os.sep) + os.sep):
            out.append(os.path.relpath(real, root).replace(os.sep, "/"))
    return tuple(out)


def _looks_like_proposal(path: Path) -> bool:
    try:
        current = load_note_text(path)
    except OSError:
        return False
    if current is None:
        return False
    split = parse_frontmatter(current.text)
    tags = split.data.get("tags") if split.readable else None
    return isinstance(tags, list) and PROPOSAL_TAG in tags or "target" in (split.data if split.readable else {})


def _key() -> bytes:
    return secret_key(state_dir() / "proposal-seal.key")


def seal(rel: str, properties: Mapping[str, object]) -> str:
    """The seal for a proposal at ``rel`` with these properties."""
    message = "\x1f".join([rel] + [f"{k}={properties.get(k) or ''}" for k in SEALED])
    return hmac.new(_key(), message.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()


def sealed_by_routine(rel: str, properties: Mapping[str, object]) -> bool:
    given = properties.get("seal")
    return isinstance(given, str) and hmac.compare_digest(given, seal(rel, properties))
