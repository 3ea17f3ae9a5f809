"""The shape of the house: no import cycle in `server/gradguard`, no front end importing the other, and
the analysis in parts: no class of it over 400 lines."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

SCRIPT = ROOT / "scripts" / "import_graph.py"
ANALYSIS = ROOT / "server" / "gradguard" / "analysis"
MAX_CLASS_LINES = 400


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


def classes_over(folder: Path, limit: int) -> list[str]:
    """`file: Class (n lines)` for each class of the Python files in `folder` longer than `limit` lines
    (its decorators included)."""
    found = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                lines = node.end_lineno - min([node.lineno, *(d.lineno for d in node.decorator_list)]) + 1
                if lines > limit:
                    found.append(f"{path.name}: {node.name} ({lines} lines)")
    return found


def test_no_class_of_the_analysis_over_400_lines() -> None:
    offenders = classes_over(ANALYSIS, MAX_CLASS_LINES)
    assert not offenders, f"classes over {MAX_CLASS_LINES} lines in analysis/:\n" + "\n".join(offenders)


def test_the_class_size_check_lists_each_long_class(tmp_path: Path) -> None:
    body = "".join(f"    def method_{i}(self):\n        return {i}\n" for i in range(250))
    (tmp_path / "parts.py").write_text(f"class Long:\n{body}\n\nclass Short:\n    pass\n")
    assert classes_over(tmp_path, MAX_CLASS_LINES) == ["parts.py: Long (501 lines)"]
