"""The shape of the house: no import cycle in `server/gradguard`, no front end importing the other, and
the analysis in parts: no class of it over 400 lines, and each part of the interpreter an object that
reaches the run's state through `self.run` and the other parts through `self.parts`."""

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


def test_a_cycle_between_modules_counts_unless_one_arrow_is_for_type_checking_only(tmp_path: Path) -> None:
    package = tmp_path / "server" / "gradguard" / "analysis"
    package.mkdir(parents=True)
    for init in (package.parent / "__init__.py", package / "__init__.py"):
        init.write_text("")
    (package / "parts.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from gradguard.analysis.calls import Calls\n")
    (package / "calls.py").write_text("from gradguard.analysis.parts import Part\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "import_graph.py").write_text(SCRIPT.read_text())
    check = [sys.executable, str(tmp_path / "scripts" / "import_graph.py"), "--check"]
    assert subprocess.run(check, capture_output=True, text=True, timeout=60).returncode == 0
    (package / "parts.py").write_text("from gradguard.analysis.calls import Calls\n")
    proc = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "  gradguard.analysis.calls <-> gradguard.analysis.parts" in proc.stdout


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


def part_offences(folder: Path) -> list[str]:
    """`file:line: Class.attribute` for each `self.attribute` that a class deriving from `Part` reads
    but does not define (its own methods and class attributes, `run` and `parts` are allowed), and
    `file: Class (bases)` for each class deriving from `Part` and something else (a mixin)."""
    found = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            bases = [b.id for b in node.bases if isinstance(b, ast.Name)] if isinstance(node, ast.ClassDef) else []
            if "Part" not in bases:
                continue
            if len(node.bases) > 1:
                found.append(f"{path.name}: {node.name} ({', '.join(bases)})")
            own = {"run", "parts"} | {m.name for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            own |= {t.id for m in node.body if isinstance(m, (ast.Assign, ast.AnnAssign))
                    for t in (m.targets if isinstance(m, ast.Assign) else [m.target]) if isinstance(t, ast.Name)}
            for item in ast.walk(node):
                if isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name) and item.value.id == "self" \
                        and item.attr not in own:
                    found.append(f"{path.name}:{item.lineno}: {node.name}.{item.attr}")
    return found


def test_each_part_of_the_interpreter_reaches_state_and_other_parts_by_name() -> None:
    parts = [line for line in (ANALYSIS / "shared.py").read_text(encoding="utf-8").splitlines()
             if line.startswith("    ") and ": " in line and line.split(":")[0].strip().islower()]
    assert len(parts) >= 13  # `Parts` declares every part
    offences = part_offences(ANALYSIS)
    assert not offences, "parts reading what they do not define (use self.run or self.parts):\n" + "\n".join(offences)


def test_the_part_check_lists_a_mixin_and_a_borrowed_attribute(tmp_path: Path) -> None:
    (tmp_path / "parts.py").write_text(
        "class Good(Part):\n    limit = 3\n    def a(self):\n        return self.run.pending, self.parts.b.c(), self.limit, self.a\n\n"
        "class Mixin(Part, Other):\n    def a(self):\n        return self.pending\n")
    assert part_offences(tmp_path) == ["parts.py: Mixin (Part, Other)", "parts.py:8: Mixin.pending"]
