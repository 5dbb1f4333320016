"""Benchmark: what every agent was sent over a simulated week of the shipped schedules.

A realistic vault (tests/weekvault.py: OKRs with numbers, a Project Map, three projects, nine
earlier daily notes, Inbox, research) and every shipped block at its time, Monday to the next
Monday morning, through the real runner and the stand-in Ollama (whose token counts are the
model family's own, tests/chat_tokens.py: Mistral's for `general`, Qwen's for `analyst` and
`coder`). Per request: the tokens its family's template and tokenizer count in what was really
sent, the limit (num_ctx less the answer's reserve), what was left out, and whether each handoff
arrived. Figures, not a test (tests/test_context_week.py asserts the same promises).

    make bench-context        # or: .venv/bin/python bench/context.py [--days 8] [--quiet]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from chat_tokens import family_of, request_tokens  # noqa: E402
from fake_ollama import FakeOllama, mistral_tokenizer  # noqa: E402
from weekvault import make_vault, model_reply, problems_of, simulate, tokens_of  # noqa: E402

MONDAY = date(2026, 11, 23)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=8)
    ap.add_argument("--quiet", action="store_true", help="only the summary")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        server = FakeOllama(max_loaded=3, load_delay=0, tokenizer=mistral_tokenizer(), reply_fn=model_reply,
                            prompt_counter=request_tokens).start()
        for key, sub in (("ROUTINE_CONFIG", "config/routine.yaml"), ("ROUTINE_STATE_DIR", "state"),
                         ("ROUTINE_RUNTIME_DIR", "run")):
            os.environ[key] = str(tmp / sub)
        os.environ["OLLAMA_HOST"] = server.url
        from routine.cli import main as routine_main

        routine_main(["init", str(tmp / "Vault")])
        config_file = tmp / "config" / "routine.yaml"
        config_file.write_text(config_file.read_text() + "\ntimezone: Europe/Berlin\n")
        make_vault(tmp / "Vault", MONDAY)
        from routine.config.loader import load_config

        started = time.monotonic()
        seen = simulate(load_config(), server, [MONDAY + timedelta(days=i) for i in range(args.days)])
        elapsed = time.monotonic() - started
        server.stop()
    report(seen, args.quiet, elapsed)
    return 0


def report(seen, quiet: bool, elapsed: float) -> None:
    over = dropped_handoffs = requests = partial = left_out = 0
    checked = [s for s in seen if s.grounding]
    flagged = [s for s in checked if s.grounding["findings"]]
    held = [s for s in checked if s.grounding["held"]]
    worst = 0.0
    if not quiet:
        print(f"{'when':<10} {'block/agent':<38} {'family':>7} {'tokens':>6} {'limit':>6} {'use':>5}  left out")
    for step in seen:
        problems = problems_of(step)
        over += sum("over the" in p for p in problems)
        dropped_handoffs += sum("dropped" in p or "did not arrive" in p for p in problems)
        partial += sum(d.get("reason", "").startswith(("sections", "cut")) for d in step.dropped)
        left_out += sum("no room" in d.get("reason", "") for d in step.dropped)
        for body in step.requests:
            requests += 1
            count, limit = tokens_of(body)
            worst = max(worst, count / limit)
            if not quiet:
                gone = "; ".join(f"{d['label']} ({d['reason'][:40]})" for d in step.dropped) or "-"
                print(f"{step.when:%a %H:%M}  {step.block + '/' + step.agent:<38} {family_of(body['model']):>7} "
                      f"{count:>6} {limit:>6} "
                      f"{count / limit:>5.0%}  {gone[:110]}{'  !! ' + '; '.join(problems) if problems else ''}")
    print(f"\n{len(seen)} steps, {requests} requests in {elapsed:.0f}s: {over} over the window by their "
          f"family's tokenizer, {dropped_handoffs} handoffs dropped; fullest request {worst:.0%} of its limit; "
          f"{partial} notes given by section or cut, {left_out} left out whole (search hits and older notes).")
    print(f"Grounding check: {len(checked)} replies checked, {len(flagged)} with unsupported claims (asked again), "
          f"{len(held)} held as proposals; steps that failed: "
          f"{sum(s.status not in ('ok', 'proposal') for s in seen)}.")
    for s in flagged[:10]:
        print(f"  {s.when:%a %H:%M} {s.block}/{s.agent}: " + "; ".join(f["claim"] for f in s.grounding["findings"]))


if __name__ == "__main__":
    raise SystemExit(main())
