"""Bounded reading of outside input: the one YAML reader (``yamlread``), with its size, alias and
nesting budgets. Text from a person, a note, a model or a file is read here, never with PyYAML's
own loaders (``tests/test_outside.py`` holds it)."""
