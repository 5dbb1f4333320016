"""Token counts that learn: a Qwen-family count within 10% of Qwen's own tokenizer on the shipped vault,
whether by that tokenizer or by the estimate calibrated from what a Qwen server reports; and the
per-alias report of each count's error against the server's (`routine models tokens`, `runs show`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from routine.models.calibration import Calibration
from routine.models.tokens import ESTIMATE, Estimate, Method, QwenTokens, count_request, qwen_available, tokenizer_of

REPO = Path(__file__).resolve().parent.parent
QWEN = "ollama_chat/qwen2.5:7b-instruct-q4_K_M"
needs_qwen = pytest.mark.skipif(not qwen_available(), reason="dashscope (ships qwen.tiktoken) is not installed")


def shipped_vault() -> dict[str, str]:
    """The notes `routine init` creates (vault_templates), by path."""
    return {str(p.relative_to(REPO)): p.read_text() for p in sorted((REPO / "vault_templates").rglob("*.md"))}


def as_request(text: str) -> list[dict]:
    return [{"role": "system", "content": "You are one of the person's agents."}, {"role": "user", "content": text}]


def qwen_server(messages: list[dict]) -> int:
    """What a Qwen server evaluates: the text by Qwen's tokenizer, plus ChatML's markers
    (`<|im_start|>role\\n` … `<|im_end|>\\n`: 5 tokens a message) and the generation prompt (3)."""
    qwen = QwenTokens()
    return sum(qwen.text(m["content"]) + 5 for m in messages) + 3


@needs_qwen
def test_a_qwen_alias_counts_with_qwens_tokenizer_within_10_percent_of_the_server():
    assert tokenizer_of(QWEN, "auto") == "qwen" and tokenizer_of("openai/Qwen2.5-7B-Instruct", None) == "qwen"
    counter = Calibration().counter(QWEN, "auto")
    assert counter.method is Method.TOKENIZER
    for path, text in shipped_vault().items():
        counted, real = count_request(counter, as_request(text)), qwen_server(as_request(text))
        assert real <= counted <= real * 1.10 + 16, path  # never below; the template overhead errs high


@needs_qwen
def test_the_estimate_calibrated_by_a_qwen_server_is_within_10_percent_on_the_shipped_vault():
    """Uncalibrated, the estimate counts Qwen's prompts ~55% high (the old 4.5 chars/token cap kept it
    ~25–30% high); calibrated from the server's counts of the agents' notes, the whole vault is within 10%."""
    notes = shipped_vault()
    cal = Calibration()
    for path, text in notes.items():
        if path.startswith("vault_templates/Agents/"):  # the requests the server has answered so far
            cal.record(QWEN, ESTIMATE, as_request(text), None, qwen_server(as_request(text)))
    counter = cal.counter(QWEN, ESTIMATE)
    assert counter.method is Method.CALIBRATED
    requests = [as_request(text) for text in notes.values()]
    real = sum(qwen_server(r) for r in requests)
    uncalibrated = sum(count_request(Estimate(), r) for r in requests)
    calibrated = sum(count_request(counter, r) for r in requests)
    assert uncalibrated > real * 1.3  # what it was: a third of the window wasted
    assert real <= calibrated <= real * 1.10, (calibrated, real)


def test_the_calibration_is_not_capped_when_the_server_counts_far_fewer():
    cal = Calibration()
    messages = as_request("Plain words about the beta launch and the people in it. " * 60)
    estimate = count_request(cal.counter("m", ESTIMATE), messages)
    for _ in range(3):
        cal.record("m", ESTIMATE, messages, None, estimate // 2)  # a tokenizer twice as coarse
    assert count_request(cal.counter("m", ESTIMATE), messages) <= estimate * 0.55


def test_models_tokens_and_runs_show_report_each_alias_counts_error_against_the_server(initialised, ollama):
    """The critic's alias (qwen) counted by the estimate: three runs, then its error against the stand-in's
    counts (ceil(chars / 4)) is shown per alias, and the count has learned (its error now is smaller)."""
    home = initialised
    home.config.write_text(home.config.read_text().replace(
        'model: "ollama_chat/qwen2.5:7b-instruct-q4_K_M"\n', 'model: "ollama_chat/qwen2.5:7b-instruct-q4_K_M"\n'
        "    tokenizer: estimate\n", 1))
    before = {r["alias"]: r for r in json.loads(home.run("models", "tokens", "--json", check=True).stdout)["aliases"]}
    assert before["analyst"] == {**before["analyst"], "method": "default", "samples": 0, "error_pct": None}
    runs = [json.loads(home.run("fire", "critic", "--json", check=True).stdout)["run"] for _ in range(3)]
    after = {r["alias"]: r for r in json.loads(home.run("models", "tokens", "--json", check=True).stdout)["aliases"]}
    analyst = after["analyst"]
    assert analyst["method"] == "calibrated" and analyst["samples"] >= 3
    assert analyst["error_when_sent_pct"] > 20  # the default estimate counted far above the server
    assert 0 <= analyst["error_pct"] < 10       # learned: just above what the server counted
    table = home.run("models", "tokens", check=True).stdout
    assert "analyst" in table and "calibrated" in table and f"{analyst['error_pct']:+.1f}%" in table
    # The run says what was counted and what the server reported for each of its requests.
    shown = json.loads(home.run("runs", "show", runs[-1], "--json", check=True).stdout)
    count = shown["token_counts"][0]
    assert count["counter"] == "estimate" and count["reported"] > 0
    assert count["error_pct"] == round(100 * (count["counted"] - count["reported"]) / count["reported"], 1)
    text = home.run("runs", "show", runs[-1], check=True).stdout
    assert f"{count['counted']} counted, {count['reported']} by the server ({count['error_pct']:+.1f}%)" in text
