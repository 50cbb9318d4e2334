# Two commands set everything up on a fresh machine:
#   make demo   builds .venv, installs hipo-jupyter, runs the quickstart headless (`hipo demo`)
#   make test   builds .venv, installs with the test extras, runs ruff and pytest
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint jstest venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

venv: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'

demo: venv
	$(BIN)/hipo demo

lint: venv
	$(BIN)/ruff check .

# jest for the sidebar's TypeScript (Node 18+, packages from the npm registry)
jstest: venv
	cd labextension && ../$(BIN)/jlpm install && ../$(BIN)/jlpm test

test: venv lint jstest
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
