"""Agents that use tools: tool definitions (``base``), the tools themselves (``vault_tools``,
``time_tools``, ``sandbox``), the registry, reading small models' tool calls (``calls``) and
the bounded loop (``loop``). Nothing here is imported unless an agent with tools runs."""
