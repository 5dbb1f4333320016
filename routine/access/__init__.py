"""What an agent may do, resolved in one place (``routine.access.resolve``).

The layer sits above config, vault and projects (it reads the agent note, the vault's projects,
tasks, artifacts and locked agents) and below everything that runs an agent or shows one: the
runner, tools, chat, approval, `agent show`, search and graph `--agent`, the daemon.
"""

from routine.access.resolve import Access, resolve, scoped

__all__ = ["Access", "resolve", "scoped"]
