"""Projects: a folder with a home note (the case file), a project-manager agent, members who
are people or agents, tasks as checkbox lines and typed, owned artifacts.

The vault is the source of truth: everything here reads notes (``model``, ``tasks``,
``artifacts``) and derives what the runtime needs from them (``assignees``: who is
assigned where, which ``routine.access`` turns into scopes;
``cadence``: schedule blocks; ``pickup``: task runs). Nothing is stored elsewhere.
"""
