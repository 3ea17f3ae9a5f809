"""Fixtures every test module may use; the shared names and helpers are in helpers.py.

Inputs that are not tracked in this repository are handled one way each:

- What the project's Makefile installs (`make models`: third_party/models; `make editors`;
  `make vscode`: third_party/vscode and the extension's .vsix) is part of `make test`: a test that
  needs it and finds it missing fails, naming the command to run (`helpers.made_by`).
  GRADGUARD_SKIP_EDITORS skips the editor tests on purpose (see test_editors.py).
- The labelled corpus comes from outside the repository (../shared/corpus, beside the clone): a
  test that reads it skips with the reason "../shared/corpus is not beside the repository" when
  it is absent (the `corpus` fixture, `helpers.shared_corpus`), and collection never reads it
  (`helpers.over_corpus`). With GRADGUARD_REQUIRE_SHARED=1, as `.ci/run` sets, that skip is a
  failure, so a broken path cannot pass unseen.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient
from pytest_lsp.client import default_feature

from helpers import shared_corpus


@default_feature(lsp.CLIENT_REGISTER_CAPABILITY)
def register_capability(client: LanguageClient, params: lsp.RegistrationParams) -> None:
    """pytest-lsp's clients say they take dynamic registrations (as VS Code and Neovim do, which
    the server asks to watch its config files), and keep them in `client.registrations`."""
    client.registrations = [*getattr(client, "registrations", []), *params.registrations]


@pytest.fixture(scope="session")
def corpus() -> Path:
    """../shared/corpus: the test skips without it (fails under GRADGUARD_REQUIRE_SHARED=1)."""
    return shared_corpus()


@pytest.fixture
def isolated(tmp_path: Path) -> None:
    """A pyproject.toml with an empty [tool.gradguard] in tmp_path: no config above it can leak into a test
    (one without the table would be passed over, as Ruff passes over one without [tool.ruff])."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "scratch"\n\n[tool.gradguard]\n')
