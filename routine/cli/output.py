"""Printing for the CLI: JSON for `--json`, aligned plain tables otherwise."""

from __future__ import annotations

import json
import sys


def print_json(data: object) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")


def print_table(rows: list[dict], columns: list[str]) -> None:
    if not rows:
        return
    widths = {c: max(len(c), *(len(_cell(r.get(c))) for r in rows)) for c in columns}
    print("  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip())
    for r in rows:
        print("  ".join(_cell(r.get(c)).ljust(widths[c]) for c in columns).rstrip())


def _cell(value: object) -> str:
    if value is None:
        return "-"
    text = str(value).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."
