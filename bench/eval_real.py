"""The trial machinery against a real OpenAI-compatible server (`make eval-real`, see
scripts/eval-real.sh, which builds and starts llama.cpp's llama-server with Gemma 3 270M).

A day's real runs are made first on the stand-in Ollama (tests/fake_ollama.py, its plausible
demo notes), in a throwaway home; then `routine models try gemma --runs today --now` replays each
run's exact request on the alias `gemma` (`openai/<model>` at --base), and `routine models scores`
prints the scoreboard. Printed: what landed, what was rejected and why, and the figures.

    python bench/eval_real.py --base http://127.0.0.1:18080/v1 --model gemma-3-270m
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
AGENTS = ("strategist", "planner", "librarian", "scribe", "critic")


def routine(env: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "routine", *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=1800)
    if check and proc.returncode != 0:
        raise SystemExit(f"routine {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def stand_in() -> tuple[subprocess.Popen, str]:
    """The stand-in Ollama the day's runs are made on; its URL."""
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "fake_ollama.py"), "--port", "0", "--demo"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the OpenAI-compatible server's base URL, e.g. http://127.0.0.1:18080/v1")
    ap.add_argument("--model", default="gemma-3-270m", help="the model's name on that server")
    ap.add_argument("--num-ctx", type=int, default=8192, help="the window the server was started with")
    ap.add_argument("--keep", action="store_true", help="keep the throwaway home (its path is printed)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="routine-eval-real-"))
    server, url = stand_in()
    env = {**os.environ, "ROUTINE_CONFIG": str(root / "config" / "routine.yaml"),
           "ROUTINE_STATE_DIR": str(root / "state"), "ROUTINE_RUNTIME_DIR": str(root / "run"), "OLLAMA_HOST": url,
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
    try:
        routine(env, "init", str(root / "Vault"))
        config = Path(env["ROUTINE_CONFIG"])
        config.write_text(config.read_text().replace(
            "models:\n", f'models:\n  gemma:\n    model: "openai/{args.model}"\n    api_base: {args.base}\n'
                         f"    num_ctx: {args.num_ctx}\n    num_predict: 512\n", 1))
        for agent in AGENTS:  # the day's real runs, on the stand-in
            done = json.loads(routine(env, "fire", agent, "--json", check=False).stdout or "{}")
            print(f"run {done.get('run')}: {agent} {done.get('status')} on {done.get('model')}")
        tried = json.loads(routine(env, "models", "try", "gemma", "--runs", "today", "--now", "--json").stdout)
        print(f"\n{len(tried['ran'])} trial(s) of {args.model} at {args.base}:")
        for trial in tried["ran"]:
            report(trial)
        print()
        print(routine(env, "models", "scores").stdout)
    finally:
        server.terminate()
        server.wait(10)
        if args.keep:
            print(f"kept: {root}")
        else:
            subprocess.run(["rm", "-rf", str(root)], check=False)
    return 0


def report(trial: dict) -> None:
    where = f"  {trial['agent']:<11} run {trial['run']}"
    if trial["result"] is None:
        print(f"{where}: NO ANSWER — {trial['error']}")
        return
    c = trial["result"]["candidate"]
    why = []
    if c["reply_ok"] is False:
        why.append(f"reply {c['reply_problem']}")
    if c["grounding_ok"] is False:
        why.append("unsupported: " + "; ".join(c["findings"][:3]))
    if c["tool_calls_valid"] is False:
        why.append("tool calls: " + "; ".join(c["tool_problems"][:3]))
    verdict = "LANDED" if c["passed"] else "REJECTED (" + ", ".join(why) + ")"
    measured = ((c["tokens_per_s"], " tokens/s"), (c["ttft_ms"], " ms to first token"),
                (c["answer_chars"] or None, " chars"), (c["tokens_out"], " tokens out"), (c["load_ms"], " ms load"))
    figures = [f"{value}{unit}" for value, unit in measured if value is not None]
    print(f"{where}: {verdict}; " + (", ".join(figures) or "no figures (no reply was accepted to measure)"))


if __name__ == "__main__":
    raise SystemExit(main())
