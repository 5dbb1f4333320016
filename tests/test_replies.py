"""A model reply that is cut off, empty, chat-template debris or a loop never lands as a section.

Through the CLI and the stand-in Ollama, on Ollama's own API and on the OpenAI-compatible path
(an `openai/…` deployment, here the stand-in's /v1 endpoint).
"""

from __future__ import annotations

import json
from datetime import date

import pytest

from fake_ollama import FakeOllama

MISTRAL = "mistral:7b-instruct-q4_K_M"
QWEN = "qwen2.5:7b-instruct-q4_K_M"
GOOD = "**Top OKRs** — KR 1.1 per [[Plans/OKRs]].\n**Focus today**\n1. Ship the beta (KR 1.1)\n"

BAD = {
    "length": {"content": "**Top OKRs** — a long answer that ran out of", "done_reason": "length"},
    "empty": {"content": "   \n"},
    "control": {"content": "<|im_end|><|im_start|>" * 60},
    "repetition": {"content": "- focus on the beta\n" * 80},
}
SAID = {"length": "cut off", "empty": "empty", "control": "control tokens", "repetition": "repetition"}


def without_fallbacks(home) -> None:
    """Only the `general` alias answers (its fallback would otherwise step in, as it should)."""
    home.config.write_text(home.config.read_text().replace("    fallbacks: [analyst]\n", "", 1))


def use_openai_path(home, url: str) -> None:
    """The `general` alias answered by an OpenAI-compatible server only."""
    text = home.config.read_text().replace(
        f'model: "ollama_chat/{MISTRAL}"',
        f'model: "openai/{MISTRAL}"\n    api_base: "{url}/v1"', 1)
    home.config.write_text(text)


def daily(home) -> str:
    path = home.vault / "Daily" / f"{date.today().isoformat()}.md"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize("path", ["ollama", "openai"])
@pytest.mark.parametrize("kind", ["length", "empty", "control", "repetition"])
def test_a_bad_reply_is_retried_once_then_fails_the_run_and_leaves_the_note_alone(initialised, ollama, path, kind):
    home = initialised
    without_fallbacks(home)
    if path == "openai":
        use_openai_path(home, ollama.url)
    ollama.script(MISTRAL, [BAD[kind], BAD[kind]])  # the retry is as bad
    proc = home.run("fire", "strategist", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "failed" and SAID[kind] in out["error"] and "nothing was written" in out["error"]
    assert "## Alignment" not in daily(home)
    alert = (home.vault / out["alert"]).read_text()
    assert SAID[kind] in alert
    run = json.loads(home.run("runs", "show", out["run"], "--json", check=True).stdout)
    assert run["status"] == "failed" and SAID[kind] in run["error"]
    # Asked twice, then gave up: no endless retries of a model that answers garbage.
    asked = [r for r in ollama.requests if r["_path"] in ("/api/chat", "/v1/chat/completions") and r.get("messages")]
    assert len(asked) == 2


def test_the_fallback_model_answers_when_the_first_keeps_answering_garbage(initialised, ollama):
    home = initialised
    ollama.script(MISTRAL, [BAD["empty"], BAD["empty"]])
    out = json.loads(home.run("fire", "strategist", "--json", check=True).stdout)
    assert out["status"] == "ok" and "qwen2.5" in out["model"]
    assert "## Alignment" in daily(home)


def test_one_bad_reply_then_a_good_one_is_written(initialised, ollama):
    home = initialised
    ollama.script(MISTRAL, [BAD["control"], GOOD])
    out = json.loads(home.run("fire", "strategist", "--json", check=True).stdout)
    assert out["status"] == "ok"
    note = daily(home)
    assert "Ship the beta" in note and "<|im_end|>" not in note


def test_a_stop_token_leaked_at_the_end_is_dropped_not_fatal(initialised, ollama):
    home = initialised
    ollama.script(MISTRAL, [GOOD + "<|im_end|>"])
    home.run("fire", "strategist", check=True)
    assert "Ship the beta" in daily(home) and "<|im_end|>" not in daily(home)


def test_a_cut_off_reply_is_asked_again_shorter(initialised, ollama):
    home = initialised
    ollama.script(MISTRAL, [BAD["length"], GOOD])
    home.run("fire", "strategist", check=True)
    retry = [r for r in ollama.requests if r["_path"] == "/api/chat" and r.get("messages")][-1]
    assert "cut off" in retry["messages"][-1]["content"]
    assert "Ship the beta" in daily(home)


def test_a_prompt_the_server_cut_to_fit_fails_the_run_and_teaches_the_count(home, tmp_path):
    """A server whose tokenizer is far denser than our estimate: it reports a prompt as long as its
    window (it cut the front off). The run fails, nothing is written, and the next count is higher."""
    dense = FakeOllama(max_loaded=3, load_delay=0.01, tokenizer=len).start()  # one token per character
    try:
        home.env["OLLAMA_HOST"] = dense.url
        home.run("init", str(home.vault), check=True)
        text = home.config.read_text().replace("    num_ctx: 8192\n    tokenizer: mistral\n",
                                               "    num_ctx: 4096\n    num_predict: 256\n", 1)
        home.config.write_text(text + "\nretry_backoff: 0.05\n")
        without_fallbacks(home)
        (home.vault / "Plans" / "OKRs.md").write_text("# OKRs\n" + "Objective text about the beta launch. " * 60)
        before = json.loads(home.run("fire", "strategist", "--dry-run", "--json", check=True).stdout)["tokens"]
        assert before["counted"] <= before["limit"]
        proc = home.run("fire", "strategist", "--json")
        out = json.loads(proc.stdout)
        assert proc.returncode == 1 and "cut to fit" in out["error"]
        assert dense.truncated, "the stand-in should have cut the prompt"
        assert "## Alignment" not in daily(home)
        # Ollama's count was recorded: the same prompt now counts much higher.
        after = json.loads(home.run("fire", "strategist", "--dry-run", "--json", check=True).stdout)["tokens"]
        assert after["counted"] > before["counted"] * 1.5 or after["counted"] <= after["limit"] < before["counted"] * 2
    finally:
        dense.stop()


LOOKALIKES = {
    "html-strikethrough": "Plan: <s>call the supplier</s> done already.\n- <s>old focus</s>",
    "strikethrough-with-spaces": "- <s> old focus </s>\n<s> dropped: the Q3 survey </s>",
    "inst-in-a-sentence": "Mistral wraps a prompt in [INST] and [/INST] tags, as its docs say.",
    "inst-starting-a-line": "[INST] marks the person's turn in Mistral's template; the answer follows it.",
    "eos-ending-a-line": "Every Mistral answer ends with the token </s>\n- and the next point follows.",
    "sys-in-a-sentence": "Llama 2 put the system prompt between <<SYS>> and <</SYS>> markers.",
}


@pytest.mark.parametrize("model", [MISTRAL, QWEN])
@pytest.mark.parametrize("kind", list(LOOKALIKES))
def test_prose_that_looks_like_template_tokens_lands(initialised, ollama, kind, model):
    """HTML and a mention of a token in prose are not template debris, for either model family."""
    home = initialised
    without_fallbacks(home)
    text = LOOKALIKES[kind]
    if model == QWEN:  # the critic's alias, analyst, is Qwen (a reply that makes no claim to check)
        ollama.script(QWEN, ["**Critique**\nThe plan holds.\n" + text])
        home.run("fire", "critic", check=True)
        written = "\n".join(p.read_text() for p in (home.vault / "Critiques").rglob("*.md"))
    else:
        ollama.script(MISTRAL, [GOOD + text])
        home.run("fire", "strategist", check=True)
        written = daily(home)
    assert text in written


LEAKS = {
    "a-turn": "Answer.\n[INST] And tomorrow? [/INST]\nSure.",
    "end-then-a-turn": "Answer.</s>\n[INST] And what about tomorrow?",
    "a-token-alone": "Answer.\n[/INST]\nMore of the answer.",
    "tool-calls": "Answer.\n[TOOL_CALLS] [{\"name\": \"read_note\"}]",
    "chatml-in-any-model": "Answer. <|im_start|>user\nAnd tomorrow?",
}


@pytest.mark.parametrize("kind", list(LEAKS))
def test_a_leaked_turn_of_the_models_own_template_is_still_refused(kind):
    from routine.models.reply import ReplyProblem, problem_with

    assert problem_with(LEAKS[kind], "stop", "ollama_chat/mistral:7b") is ReplyProblem.CONTROL_TOKENS
    if kind != "chatml-in-any-model":
        assert problem_with(LEAKS[kind], "stop", "ollama_chat/qwen2.5:7b") is None  # not Qwen's template


RUNAWAY = {"content": "## Focus\n- ship the beta\n" * 60, "done_reason": "length"}  # repeats to the limit


@pytest.mark.parametrize("replies", [[BAD["length"], BAD["length"]], [RUNAWAY, BAD["repetition"]],
                                     [BAD["repetition"], RUNAWAY]],
                         ids=["cut-off-twice", "runaway-then-a-loop", "a-loop-then-runaway"])
def test_a_model_that_never_stops_is_told_apart_from_a_long_answer(initialised, ollama, replies):
    """A model that does not follow the prompt (it runs to the token limit, repeating or never ending a
    section): the error and the alert say so, not only "raise num_predict"."""
    home = initialised
    without_fallbacks(home)
    ollama.script(MISTRAL, replies)
    out = json.loads(home.run("fire", "strategist", "--json").stdout)
    assert "the model did not stop; it may not follow instructions" in out["error"]
    alert = (home.vault / out["alert"]).read_text()
    assert "did not stop" in alert and "instruction-tuned model" in alert
    assert "## Alignment" not in daily(home)


def test_an_unreachable_openai_compatible_server_is_named_as_such_not_as_ollama(initialised):
    """The sentence and the fix come from the provider's adapter (issue 26): nothing says to start Ollama."""
    home = initialised
    without_fallbacks(home)
    use_openai_path(home, "http://127.0.0.1:9")  # nothing listens on the discard port
    proc = home.run("fire", "strategist")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "The model server at http://127.0.0.1:9/v1 is not reachable" in proc.stderr
    assert "api_base" in proc.stderr and "ollama serve" not in proc.stderr
