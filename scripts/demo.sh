#!/usr/bin/env bash
# The quick start's first command: a vault in ./demo/Vault, then one agent fired into it.
# Uses your Ollama if OLLAMA_HOST answers, else the stand-in server from tests/ (canned replies),
# so the whole path (init, prompt, model call, note, journal) can be seen on any machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export ROUTINE_CONFIG="$PWD/demo/config/routine.yaml" ROUTINE_STATE_DIR="$PWD/demo/state"
export LITELLM_LOCAL_MODEL_COST_MAP=True
mkdir -p demo

stub_pid=""
cleanup() { [ -n "$stub_pid" ] && kill "$stub_pid" 2>/dev/null || true; }
trap cleanup EXIT
if ! $BIN/python - <<'PY' 2>/dev/null
import os, urllib.request
urllib.request.urlopen(os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434").rstrip("/") + "/api/version", timeout=2)
PY
then
  echo "No Ollama answering; using the stand-in server from tests/fake_ollama.py (canned replies)."
  $BIN/python tests/fake_ollama.py --port 0 --demo > demo/stub.url &
  stub_pid=$!
  for _ in $(seq 50); do grep -q http demo/stub.url 2>/dev/null && break; sleep 0.1; done
  OLLAMA_HOST=$(grep -o 'http://[0-9.:]*' demo/stub.url | head -1)
  export OLLAMA_HOST
fi

$BIN/routine init demo/Vault
$BIN/routine fire strategist
echo
echo "----- demo/Vault/Daily/$(date +%F).md -----"
cat "demo/Vault/Daily/$(date +%F).md"
echo
$BIN/routine runs list -n 3
