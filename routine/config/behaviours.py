"""How an agent takes part in a project: the one list of behaviours and what each one means.

A project's home note gives each agent member one (`behaviours: ["Builder: reactive"]`), an agent
note may carry its own default (`behaviour:`), and `routine project assign --as`, `agent new
--behaviour` and the schema all offer exactly these. Everything that differs by behaviour is a
property here; code asks the property (``member.behaviour.picks_up_tasks``), never compares
names. A new behaviour is one member below, with its properties.
"""

from __future__ import annotations

from enum import Enum


class Behaviour(str, Enum):
    AUTONOMOUS = "autonomous"
    SEMI_AUTONOMOUS = "semi-autonomous"
    REACTIVE = "reactive"
    SCHEDULED = "scheduled"

    @property
    def meaning(self) -> str:
        return _TRAITS[self][0]

    @property
    def works_on_cadence(self) -> bool:
        """Runs on the project's cadence (the manager's digest schedule), writing in the project."""
        return _TRAITS[self][1]

    @property
    def picks_up_tasks(self) -> bool:
        """Runs when a task line assigns it (`[assignee:: [[Name]]]`)."""
        return _TRAITS[self][2]

    @property
    def writes_as_proposals(self) -> bool:
        """Its writes in the project become proposals for the person to approve."""
        return _TRAITS[self][3]


# behaviour: (what it means, works on the cadence, picks up assigned tasks, writes as proposals)
_TRAITS: dict[Behaviour, tuple[str, bool, bool, bool]] = {
    Behaviour.AUTONOMOUS: ("works on the project's cadence, writes within the project", True, True, False),
    Behaviour.SEMI_AUTONOMOUS: ("as reactive, but its writes become proposals", False, True, True),
    Behaviour.REACTIVE: ("runs when a task is assigned to it", False, True, False),
    Behaviour.SCHEDULED: ("runs on its own schedule files only", False, False, False),
}

DEFAULT = Behaviour.REACTIVE
NAMES: tuple[str, ...] = tuple(b.value for b in Behaviour)


def parse(text: str) -> Behaviour | None:
    """The behaviour ``text`` names (any case), or None."""
    try:
        return Behaviour(text.strip().lower())
    except ValueError:
        return None
