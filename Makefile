# The two quick-start commands are `make demo` and `make test`; everything else is for developers.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup demo test bench bench-residency clean

$(BIN)/routine: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	@touch $@

setup: $(BIN)/routine

demo: setup
	bash scripts/demo.sh

test: setup
	$(BIN)/python -m pytest -q

bench: bench-residency

bench-residency: setup
	$(BIN)/python bench/residency.py

clean:
	rm -rf demo
