"""Reviews that chain: a block `after:` another runs once per run of the step it follows, through
the daemon, seeing that step's output; a chain that comes back to itself is refused where it is
written."""

from __future__ import annotations

import json

from test_daemon import daemon, journal_rows, only_schedule
from waits import wait_until

CHAINED = """\
blocks:
  build:
    cron: "0 10 * * mon-fri"
    steps:
      - agent: builder
        task: Propose the first implementation step for today's deep-work task.
        write: {note: "Builds/{{ today }} Build.md"}
  build-review:
    description: The Critic reviews each build as soon as the Builder has written it.
    after: {block: build, step: builder}
    steps:
      - agent: critic
        task: Review the build above. Two or three points at most.
        inputs: ["{{ steps.builder.output }}"]
        write: {note: "Critiques/{{ today }} Build Review.md"}
"""


def builds_and_reviews(home) -> tuple[list[str], list[tuple[str, str]]]:
    builds = [r[0] for r in journal_rows(home, "SELECT id FROM runs WHERE kind='block' AND block='build' "
                                               "ORDER BY started_at")]
    reviews = journal_rows(home, "SELECT trigger, status FROM runs WHERE kind='block' AND block='build-review' "
                                 "ORDER BY started_at")
    return builds, reviews


def test_a_critic_chained_after_the_builder_runs_once_per_builder_run(initialised, ollama):
    home = initialised
    only_schedule(home, CHAINED)

    def reply(model, messages):
        asked = "\n".join(str(m.get("content") or "") for m in messages)
        if "Review the build above" in asked:
            return "- The step is small enough to try today.\n- Say how to roll it back."
        if "Propose the first implementation step" in asked:
            return "Add a `--dry-run` flag to the import script; run it on last week's export first."
        return None
    ollama.reply_fn = reply
    listed = home.run("schedule", "list", check=True).stdout
    assert "after build.builder" in listed, listed  # no time of its own: it follows the build
    with daemon(home):
        for _ in range(2):
            home.run("fire", "build", check=True)
        wait_until(lambda: len(builds_and_reviews(home)[1]) == 2
                   and all(s != "running" for _, s in builds_and_reviews(home)[1]), 60, "two reviews")
        builds, reviews = builds_and_reviews(home)
        assert len(builds) == 2
        assert sorted(t for t, _ in reviews) == sorted(f"after:{b}" for b in builds)  # one per build, named by it
        assert all(s == "ok" for _, s in reviews), reviews
        critic_asked = [json.dumps(r) for r in ollama.requests if "Review the build above" in json.dumps(r)]
        assert critic_asked and all("--dry-run" in r for r in critic_asked)  # it saw the Builder's output
        review = next((home.vault / "Critiques").glob("* Build Review.md")).read_text()
        assert "roll it back" in review
        # A build whose Builder failed wrote nothing to review: no review is queued for it.
        ollama.script("qwen2.5-coder:7b-instruct-q4_K_M", [{"error": (500, "out of memory")}] * 20)
        failed = home.run("fire", "build")
        assert failed.returncode == 1
        st = json.loads(home.run("status", "--json", check=True).stdout)
        assert not any("build-review" in w for w in (*st["queue"]["running"], *st["queue"]["queued"])), st["queue"]
        assert len(builds_and_reviews(home)[1]) == 2


LOOP = """\
blocks:
  build:
    after: {block: build-review}
    steps:
      - agent: builder
        task: Build.
        write: {note: "Builds/x.md"}
  build-review:
    after: {block: build, step: builder}
    steps:
      - agent: critic
        task: Review.
        write: {note: "Critiques/x.md"}
"""
NOWHERE = """\
blocks:
  gate:
    cron: "0 9 * * *"
    after: {block: nowhere}
    steps:
      - agent: librarian
        task: File.
        write: {note: "Daily/x.md", section: "X"}
  filed:
    after: {block: nowhere}
    steps:
      - agent: librarian
        task: File.
        write: {note: "Daily/y.md", section: "Y"}
"""


def test_a_chain_that_returns_to_itself_is_refused_with_its_location(initialised):
    home = initialised
    only_schedule(home, LOOP)
    said = home.run("schedule", "validate")
    text = said.stdout + said.stderr
    assert said.returncode != 0 and "Traceback" not in text
    assert "test.yaml:3" in text and "comes back to itself (build after build-review after build)" in text, text
    assert "test.yaml:9" in text and "(build-review after build after build-review)" in text
    only_schedule(home, NOWHERE)
    text = home.run("schedule", "validate").stdout + home.run("schedule", "validate").stderr
    assert "test.yaml:4: At 'blocks.gate.after'" in text and "not both" in text, text
    only_schedule(home, NOWHERE.replace('    cron: "0 9 * * *"\n', ""))
    said = home.run("schedule", "validate")
    assert "test.yaml:3" in said.stdout + said.stderr and "no block named 'nowhere'" in said.stdout + said.stderr


def test_a_chained_block_fired_by_hand_says_what_it_follows(initialised, ollama):
    home = initialised
    only_schedule(home, CHAINED)
    said = home.run("fire", "build-review")
    text = said.stdout + said.stderr
    assert said.returncode != 0 and "Traceback" not in text, text
    assert "follows build.builder, which has no finished run to review yet" in text and "fire build first" in text
    assert not list((home.vault / "Alerts").glob("*.md"))  # a person's mistake, not a failure
    dry = home.run("fire", "build-review", "--dry-run", check=True).stdout
    assert "(output of the builder step of build)" in dry
    home.run("fire", "build", check=True)
    home.run("fire", "build-review", check=True)  # reviews the latest build
    critic = [r for r in ollama.requests if "Review the build above" in json.dumps(r)]
    assert len(critic) == 1 and "Model: qwen2.5-coder" in json.dumps(critic[0]["messages"])  # the build's output
