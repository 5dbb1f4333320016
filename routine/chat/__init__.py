"""Conversations with an agent: in a chat note, in the terminal; sessions with memory.

``conversation`` answers one message (context, rolling summary, the model, tools); ``fold``
keeps the running summary; ``sessions`` ties a conversation to the journal (terminal) and
``notes`` to a chat note in the vault.
"""
