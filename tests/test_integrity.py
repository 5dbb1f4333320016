"""Words and state that must not be lost: leftovers of a killed write are cleaned up, and a
person's editor saving while routine writes the same note loses nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

from test_daemon import daemon, only_schedule
from waits import scaled


def killed_mid_write(home, rel: str) -> None:
    """A routine process killed (-9) after its temp file was written, before the rename."""
    code = textwrap.dedent(f"""\
        import os, signal
        from pathlib import Path
        from routine.atomicfile import write_temp
        write_temp(Path({str(home.vault / rel)!r}), b"half of a new version")
        os.kill(os.getpid(), signal.SIGKILL)
        """)
    proc = subprocess.run([sys.executable, "-c", code], env=home.env, check=False)
    assert proc.returncode == -signal.SIGKILL


def leftovers(home):
    return sorted(p.name for p in home.vault.rglob("*") if ".routine-tmp-" in p.name)


def test_temp_files_left_by_a_killed_write_are_removed_when_the_daemon_starts(initialised):
    home = initialised
    only_schedule(home, "triggers: []\n")
    (home.vault / "Daily").mkdir(exist_ok=True)
    (home.vault / "Daily" / "Mine.md").write_text("My words.\n")
    for _ in range(3):
        killed_mid_write(home, "Daily/Mine.md")
    killed_mid_write(home, "Plans/OKRs.md")
    assert len(leftovers(home)) == 4
    with daemon(home):
        assert leftovers(home) == []
    assert (home.vault / "Daily" / "Mine.md").read_text() == "My words.\n"
    assert "removed 4 temp file(s)" in (home.root / "daemon.log").read_text()


EDITOR = textwrap.dedent("""\
    import sys, time
    path, stop = sys.argv[1], sys.argv[2]
    import os
    i = 0
    while not os.path.exists(stop):
        i += 1
        with open(path, "a") as note:   # an editor's save: open, a moment, write, close
            time.sleep(0.001)
            note.write(f"person line {i}\\n")
        time.sleep(0.005)  # pacing: the person's next save a few milliseconds later (waits for nothing)
    print(i)
    """)


def test_a_note_hammered_by_the_persons_editor_while_routine_writes_loses_no_line(tmp_path):
    """A second process appends a line every few milliseconds while routine rewrites a
    generated section of the same note again and again: every line of the person's is there."""
    from datetime import datetime

    from routine.errors import RoutineError
    from routine.vault import Provenance, WriteTarget, write_output

    vault = tmp_path / "Vault"
    (vault / "Daily").mkdir(parents=True)
    note = vault / "Daily" / "Today.md"
    note.write_text("# Today\n")
    stop = tmp_path / "stop"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(note), str(stop)], stdout=subprocess.PIPE, text=True)
    landed = n = 0
    try:
        # At least 200 rewrites, and on until the editor has saved 150 lines (a fast box writes
        # quickly): enough overlap that a lost line would show.
        while n < 200 or (note.read_text().count("person line") < 150 and n < 5000):
            n += 1
            prov = Provenance(agent="planner", model="m", run=f"r{n}", generated=datetime(2026, 11, 22, 8, 30))
            try:
                write_output(vault, WriteTarget(note="Daily/Today.md", section="Plan"), f"Plan version {n}", prov,
                             ["Daily/**"])
                landed += 1
            except RoutineError:
                pass  # the note kept changing three times over: nothing written, nothing lost
    finally:
        stop.touch()
        written = int(editor.communicate(timeout=scaled(30))[0])
    text = note.read_text()
    missing = [i for i in range(1, written + 1) if f"person line {i}\n" not in text]
    assert written >= 150 and landed > 150  # routine still gets its writes in
    assert missing == [], f"{len(missing)} of {written} lines lost"


def test_an_unmounted_vault_is_waited_out_not_written_into_and_nothing_is_handled_twice(initialised, ollama):
    import json

    from test_daemon import wait_for
    from test_triggers import INBOX_TRIGGER, trigger_runs

    home = initialised
    only_schedule(home, INBOX_TRIGGER.split('  - "on": modified')[0])
    home.config.write_text(home.config.read_text() + "watch: {reconcile: 1s}\n")
    with daemon(home) as first:
        (home.vault / "Inbox" / "Call with Sam.md").write_text("Sam wants the battery report by Friday.\n")
        wait_for(lambda: [r for r in trigger_runs(home) if r[1] != "running"], 30, "the librarian run")
    wait_for(lambda: first.poll() is not None, 30, "the first daemon to exit")
    away = home.root / "Vault.away"
    home.vault.rename(away)
    home.vault.mkdir()  # the empty mount point of a disk that is not mounted
    with daemon(home, "daemon2.log"):
        status = json.loads(home.run("status", "--json", check=True).stdout)
        assert not status["health"]["ok"] and any("is empty" in p for p in status["health"]["problems"])
        assert list(home.vault.iterdir()) == []  # no dashboard, no alert, nothing written into it
        home.vault.rmdir()
        status = json.loads(home.run("status", "--json", check=True).stdout)
        assert any("does not exist" in p for p in status["health"]["problems"])
        assert not home.vault.exists()
        away.rename(home.vault)  # the disk is mounted again
        alert = wait_for(lambda: list((home.vault / "Alerts").glob("*vault was missing*")), 30, "the alert")
        assert "wrote nothing into it" in alert[0].read_text()
        wait_for(lambda: json.loads(home.run("status", "--json", check=True).stdout)["health"]["ok"], 30, "health")
    assert len(trigger_runs(home)) == 1  # the note handled before the outage is not handled again


def test_a_daily_note_written_by_several_agents_names_them_all(initialised, ollama):
    import json
    import re

    import yaml

    home = initialised
    for agent in ("strategist", "planner", "guardian"):
        home.run("fire", agent, check=True)
    note = next((home.vault / "Daily").glob("*.md")).read_text()
    props = yaml.safe_load(note.split("---\n")[1])
    runs = {r["agent"]: r["id"] for r in reversed(json.loads(home.run("runs", "list", "--json", check=True).stdout))}
    assert props["routine"]["agent"] == "guardian" and props["routine"]["run"] == runs["guardian"]  # the latest
    assert len(note.split("---\n")[1].splitlines()) == 1  # bookkeeping that does not grow
    # Each section's marker says who wrote it, in which run.
    for key, agent in (("alignment", "strategist"), ("plan", "planner"), ("risks", "guardian")):
        assert re.search(rf"%% routine:begin {key} agent={agent} sha=\w+ run={runs[agent]}( after=\w+)? %%", note)


def test_a_section_the_person_deleted_comes_back_where_it_was(initialised, ollama):
    import re

    home = initialised
    for agent in ("strategist", "planner", "guardian"):
        home.run("fire", agent, check=True)
    note = next((home.vault / "Daily").glob("*.md"))
    text = note.read_text() + "\n## Evening\nMy own notes for tonight.\n"
    # The person deletes the whole Alignment section, heading and all, so the agent writes it afresh.
    text = re.sub(r"## Alignment\n%% routine:begin alignment .*?%% routine:end alignment %%\n\n?", "", text,
                  flags=re.DOTALL)
    note.write_text(text)
    assert "## Alignment" not in note.read_text()
    home.run("fire", "strategist", check=True)
    headings = re.findall(r"(?m)^## (\w+)", note.read_text())
    assert headings == ["Alignment", "Plan", "Risks", "Evening"]  # back in its place, not below the person's text
    assert note.read_text().endswith("## Evening\nMy own notes for tonight.\n")


def test_a_reload_that_points_the_vault_at_a_wrong_path_is_unhealthy_and_writes_nothing_there(initialised, ollama):
    import json
    import re

    from test_daemon import wait_for

    home = initialised
    only_schedule(home, "triggers: []\n")
    wrong = home.root / "Vualt"
    with daemon(home):
        text = home.config.read_text()
        home.config.write_text(re.sub(r"(?m)^vault:.*$", f"vault: {wrong}", text, count=1))

        def problems():
            return json.loads(home.run("status", "--json", check=True).stdout)["health"]["problems"]
        found = wait_for(lambda: [p for p in problems() if "does not exist" in p], 30, "the reload")
        assert str(wrong) in found[0]
        home.run("fire", "strategist")  # a run in the meantime writes nothing anywhere
        assert not wrong.exists()
