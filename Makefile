# The two quick-start commands are `make demo` and `make test`; everything else is for developers.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup demo test bench clean

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

clean:
	rm -rf demo
