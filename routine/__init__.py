"""routine: a local team of LLM agents that works a person's day in their Obsidian vault.

Read docs/source-code.md for the map of the code. Nothing heavy is imported here.
"""

__version__ = "0.1.0"
