"""The grounding check's memory does not grow with the vault (issue 48): a claim looked for in the notes
an agent may read indexes every note once a day, and a month-old vault has hundreds more than a new
one; what the daemon keeps of them between checks is their keys, and the facts of the notes looked at
last, not the facts of every note (kept, a lived month's daemon grew 170 → 214 MB with its vault)."""

from __future__ import annotations

import gc
import tracemalloc
from datetime import date
from functools import partial
from pathlib import Path

TODAY = date(2026, 11, 23)
REPLY = "The Orin supplier review is on 14 December 2026, with the €48,250 budget for 120 seats."


def _note(i: int) -> str:
    """A realistic note of a month-old vault: headings, a table, tasks, figures, dates and names."""
    lines = [f"# Meeting {i}", "", f"Met with Person{i} Lastname{i % 37} about Topic{i % 53} and Area{i % 11}.", "",
             "## Figures", "", "| item | amount | when |", "|---|---|---|"]
    lines += [f"| Item{i}-{k} | €{(i * 131 + k * 17) % 9000 + 100} | 2026-{1 + k % 12:02d}-{1 + (i + k) % 27:02d} |"
              for k in range(12)]
    lines += ["", "## Tasks", ""]
    lines += [f"- [ ] Follow up Thing{i}-{k} with Someone{k} by {1 + k % 27} March, {k * 7 + i % 40} units"
              for k in range(10)]
    lines += ["", "## Log", ""] + [f"Worked {k + 2} hours on Part{i}-{k}; {k * 3 + 5}% of Plan{i % 19} done."
                                      for k in range(10)]
    return "\n".join(lines) + "\n"


def _vault(root: Path, notes: int) -> Path:
    for i in range(notes):
        path = root / "Projects" / f"Project {i % 9}" / f"Meeting {i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_note(i))
    (root / "Projects" / "Orin" / "Orin.md").parent.mkdir(parents=True, exist_ok=True)
    (root / "Projects" / "Orin" / "Orin.md").write_text(
        "# Orin\n\n- Supplier review on 2026-12-14 with the budget: €48,250 for 120 seats.\n")
    return root


def _kept_after_a_check(vault: Path) -> tuple[int, dict[str, str]]:
    """The bytes the process keeps after one check of REPLY on ``vault`` (the check's module loaded
    before), and where its claims were found."""
    from routine.vault.grounding import grounds_for, review
    from routine.vault.scope import in_scope

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        checked = review(REPLY, grounds_for(vault, partial(in_scope, ["**"]), ["# Today\n\nA quiet day.\n"], TODAY),
                         "lenient")
        found = dict(checked.found_in)
        assert not checked.findings, checked.findings
        del checked
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before, found
    finally:
        tracemalloc.stop()


def test_a_vault_four_times_as_big_keeps_the_check_about_as_small(tmp_path):
    _kept_after_a_check(_vault(tmp_path / "warm", 3))  # the check's modules and patterns loaded
    small, found_small = _kept_after_a_check(_vault(tmp_path / "small", 150))
    big, found_big = _kept_after_a_check(_vault(tmp_path / "big", 600))
    assert found_small == found_big and set(found_big.values()) == {"Projects/Orin/Orin.md"}
    # 450 notes more: their keys and their facts packed (some 9 kB each, these notes' many names and
    # figures all new); their facts as objects (some 120 kB each: 53 MB more) are not kept
    assert big - small < 10_000_000, f"450 notes more kept {(big - small) / 1e6:.1f} MB more ({small / 1e6:.1f} → " \
                                    f"{big / 1e6:.1f} MB)"
