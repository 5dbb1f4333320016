"""Output on a terminal, import-free (the commands use it; nothing heavy is loaded): ``output``
(tables cut to the width, `--json`, times in routine's zone), ``progress`` (live lines of long work)."""
