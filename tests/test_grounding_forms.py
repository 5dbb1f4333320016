"""How a 7B model says what the notes say, and how it gets it wrong (issue 48, tuned on heldout-3):
each form lands when it rests on the notes and is held when it does not."""

from __future__ import annotations

import textwrap
from datetime import date

from routine.vault.grounding import Grounds, check

BAKERY = textwrap.dedent("""\
    # OKRs
    - KR 1.3: wholesale revenue per week — current €1,760 / target €2,400 — by 2026-12-31
    - KR 3.3: bigger grid connection approved — by 2026-12-10
    - Prospects: Markthalle (€380 a week), Studio Kaffee (€250 a week).

    # Margin model
    | line | per loaf |
    |---|---|
    | flour, Auer Type 1050, 0.62 kg | €0.58 |
    | labour, 6 minutes at €19/h | €1.90 |
    | **total** | **€3.24** |

    Wholesale price €4.20 → margin 23% on the loaf.

    # Oven
    - Stadtwerke application sent 2026-11-20; they answer in about 10 working days.
    - Contractor meeting 2026-11-30. New deck oven: 28.5 kW. Butter per batch: 1.9 kg.
    - Oven delivery: 2027-01-08. Sign-off by the inspector by 2027-01-15.

    # Week 47
    Hours: Luca 53, me 51, Jakob 44, Ines 27.
    Luca is at 41 hours this week; nobody works more than 48 hours.

    | week | new pre-orders | waste |
    |---|---|---|
    | W45 | 38 | 9.5% |
    | W46 | 29 | 8.6% |
    | W47 | 45 | 8.5% |

    Waste target: under 6%.

    # Storage
    - Butter stollen keeps three to four weeks wrapped in foil, stored cool.
    """)


def claims(reply: str) -> list[str]:
    grounds = Grounds(BAKERY, date(2026, 11, 26), lambda target: target.startswith("Inbox/"),
                      frozenset({"christmas stollen"}))
    return [f.claim for f in check(reply, grounds)]


def test_a_tables_total_is_the_total_of_its_rows():
    assert claims("Labour is the biggest line: €1.90 of the €3.24 loaf.") == []
    assert claims("A sourdough loaf costs €3.24 and sells for €4.20 wholesale, so about 23% margin.") == []


def test_names_weekday_days_and_ranges_of_weeks_are_not_figures():
    assert claims("Flour: Auer Type 1050 a week, as before.") == []
    assert claims("- Mon 30: contractor meeting at 08:00.") == []
    assert claims("- Tue 30: contractor meeting at 08:00.") == ["Tue 30"]  # 30 November is a Monday
    assert claims("Weeks 45 to 47 had 38, 29 and 45 new orders.") == []


def test_a_date_counted_from_another_is_worked_out():
    assert claims("Stadtwerke: ten working days from 20 November puts the answer around Friday 4 December.") == []
    assert claims("Stadtwerke: ten working days from 20 November puts the answer around Friday 11 December.") \
        == ["Friday 11 December"]


def test_a_date_the_notes_label_with_another_event_is_held():
    assert claims("The oven is delivered on 8 January; sign-off by 15 January.") == []
    assert claims("The oven is only delivered on 15 January.") == ["15 January"]


def test_a_total_of_a_noted_figure_and_the_replys_additions_is_worked_out():
    reply = "If Markthalle (€380 a week) and Studio Kaffee (€250) both say yes, wholesale would be about {} a week."
    assert claims(reply.format("€2,390")) == []
    assert claims(reply.format("€2,600")) == ["€2,600"]


def test_a_figure_of_one_person_said_of_another_is_held():
    assert claims("Jakob was at 44 hours last week.") == []
    assert claims("Keep Luca's slot short: he's already at 44 hours this week.") == ["44 hours"]


def test_a_figure_the_sentence_works_out_must_follow_from_its_figures():
    assert claims("Luca is at 41 hours this week, so he has 7 hours left before he hits 48.") == []
    assert claims("Luca is at 41 hours this week, so he has 9 hours left before he hits 48.") == ["9 hours"]
    assert claims("A loaf costs €3.24 and sells for €4.20, so we keep €1.16 a loaf.") == ["€1.16"]


def test_a_figure_of_another_week_or_said_otherwise_is_held():
    assert claims("Last week's waste count was 8.5% against a target under 6%.") == []
    assert claims("Last week's waste count was still 9.5% against a target under 6%.") == ["9.5%"]
    assert claims("Stollen keeps about six weeks in foil.") == ["six weeks"]
    assert claims("Multiply the orders by the 28 kg of butter per batch.") == ["28 kg"]


def test_a_project_in_title_case_or_by_its_folder_must_be_named():
    assert claims("Most of the week went to the Christmas Stollen project.") == []
    assert "Pop-up Café" in claims("Menu draft for the Pop-up Café project.")
    assert claims("- [[Inbox/Idea]] → `Projects/Bread School/`") == ["Bread School"]
    assert claims("- [[Inbox/Clipping]] → `Projects/Christmas Stollen/`") == []
