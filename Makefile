# Quick start:  make run   (set up, then open Babelfind on its bundled defaults)
#               make test  (set up, then run every test and the layering contracts)
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: run test demo bench clean

run: $(VENV)/.installed
	$(BIN)/babelfind-gui

# The same engine from the command line: index the sample corpus and ask it something.
demo: $(VENV)/.installed
	$(BIN)/babelfind index resources/sample
	$(BIN)/babelfind search "how do bees make honey"

test: $(VENV)/.installed
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info
