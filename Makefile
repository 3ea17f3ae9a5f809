# Two commands do all set-up on a fresh machine:
#   make demo   creates .venv, installs gradguard and runs it on examples/
#   make test   creates .venv if needed and runs the whole test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
MODELS := third_party/models

.PHONY: demo test models knowledge docs bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "torch==2.13.0"
	$(BIN)/pip install -q -e ".[test,verify]"
	touch $(STAMP)

demo: $(STAMP)
	-$(BIN)/gradguard check examples/

# Python sources of real model libraries (wheels unpacked, never vendored): they must get no errors.
$(MODELS)/.stamp:
	mkdir -p $(MODELS)/wheels
	$(PYTHON) -m pip download -q --no-deps --only-binary=:all: -d $(MODELS)/wheels \
		torchvision==0.28.0 timm==1.0.31
	cd $(MODELS) && for w in wheels/*.whl; do $(PYTHON) -m zipfile -e $$w src/; done
	touch $@

models: $(MODELS)/.stamp

test: $(STAMP) $(MODELS)/.stamp
	$(BIN)/python -m pytest -n 2

# Regenerates the op table from the installed torch (tests/test_knowledge_drift.py checks it).
knowledge: $(STAMP)
	$(BIN)/python scripts/generate_op_table.py

docs: $(STAMP)
	$(BIN)/python scripts/generate_docs.py

# TorchFix pins libcst<1.6, so it gets a venv of its own. `make bench ARGS="--tree PATH --skip-torchfix"`.
TORCHFIX_VENV := bench/.venv-torchfix

$(TORCHFIX_VENV)/.stamp:
	$(PYTHON) -m venv $(TORCHFIX_VENV)
	$(TORCHFIX_VENV)/bin/pip install -q "torchfix==0.7.0"
	touch $@

bench: $(STAMP) $(MODELS)/.stamp $(TORCHFIX_VENV)/.stamp
	$(BIN)/python bench/scan.py $(ARGS)

clean:
	rm -rf $(VENV) third_party
