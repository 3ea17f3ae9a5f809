"""The shape of the house: no import cycle in `server/gradguard`, no front end importing the other."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import ROOT

SCRIPT = ROOT / "scripts" / "import_graph.py"


def test_no_import_cycle_and_no_arrow_between_front_ends() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
    assert "import cycles (between packages, then between modules): 0" in proc.stdout
    assert "arrows from one adapter into another: 0" in proc.stdout


def test_the_check_fails_on_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "server" / "gradguard"
    (package / "cli").mkdir(parents=True)
    (package / "lsp").mkdir()
    (package / "__init__.py").write_text("")
    (package / "cli" / "__init__.py").write_text("")
    (package / "lsp" / "__init__.py").write_text("")
    (package / "cli" / "check.py").write_text("from gradguard.lsp import server\n")
    (package / "lsp" / "server.py").write_text("from gradguard.cli.check import run\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "import_graph.py").write_text(SCRIPT.read_text())
    proc = subprocess.run([sys.executable, str(tmp_path / "scripts" / "import_graph.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "  cli <-> lsp" in proc.stdout
    assert "  cli -> lsp" in proc.stdout and "  lsp -> cli" in proc.stdout
