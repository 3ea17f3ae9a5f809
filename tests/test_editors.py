"""`gradguard lsp` in real editors, run headless: Neovim 0.7 (Debian) and 0.11 (PyPI), Emacs 28
with Eglot, Vim 9 with ALE.

Each editor gets the configuration docs/editors.md shows (the snippets in tests/editors/ are
checked to appear there word for word), with `gradguard` on its PATH, and opens a copy of a
GG001 case of the shared corpus in a project folder of its own, with a pyproject.toml (but for
Vim's, where the snippet falls back to the file's folder). Its driver in tests/editors/ then
does what a user does: waits for GG001 in the editor's own
diagnostic store, asks the editor for the code actions at the finding and takes the preferred
quick fix, waits until the server, told of the change by the editor, withdraws GG001, and saves.
The test checks that GG001 was at the `# expect: GG001` line, that the editor chose the preferred
fix and saved exactly what that fix makes, and runs the saved program with torch: it must run
cleanly, where the original raises PyTorch's RuntimeError.

The editors come from `make editors` (which `make test` runs). One that is missing is a failure;
GRADGUARD_SKIP_EDITORS=all (or a comma-separated list of the ids below) skips them on purpose.
On a failure the message holds the driver's progress, its report, the editor's output and the
end of the server's log (`gradguard lsp --log-file ... -v`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from gradguard.config import Settings
from gradguard.engine import analyse_document
from gradguard.findings import Applicability
from gradguard.fixes.edits import apply_edits
from gradguard.source.document import Document

from helpers import CORPUS, GRADGUARD, ROOT, markers

pytestmark = pytest.mark.xdist_group("heavy")  # real editors: wall-clock timeouts, never beside a library scan

CASES = CORPUS / "cases"
DRIVERS = ROOT / "tests" / "editors"
TOOLS = ROOT / "third_party" / "editors"  # made by `make editors`
DOCS = ROOT / "docs" / "editors.md"
EDITOR_TIMEOUT_S = 90  # one editor run; each wait inside it is GG_TIMEOUT_MS
WAIT_MS = 20000  # the server takes a few seconds to start on a busy machine

# Two cases, alternated between the editors: in the first the preferred fix rewrites the flagged
# line (`out += residual` in a method); in the second it rewrites the line above (`.clone()` on
# the sigmoid), and the next action is unsafe, so taking the preferred one matters.
RESIDUAL = "seed_resnet_relu_then_add.py"
SIGMOID = "sigmoid_then_relu_inplace.py"


@dataclass(frozen=True)
class Editor:
    id: str
    version: str  # the start of what the driver reports, e.g. "nvim 0.7."
    binary: str
    args: tuple[str, ...]  # after the binary; {driver} is the driver's path
    driver: str  # under tests/editors/
    init: str  # the configuration from docs/editors.md, under tests/editors/
    case: str
    stdin: str = ""
    pyproject: bool = True  # the project folder has a pyproject.toml


EDITORS = [
    Editor("nvim-0.7", "nvim 0.7.", "/usr/bin/nvim",
           ("--headless", "--clean", "-n", "-i", "NONE", "-c", "lua dofile(os.getenv('GG_DRIVER'))"),
           "nvim/e2e.lua", "nvim/init-0.7.lua", RESIDUAL),
    Editor("nvim-0.11", "nvim 0.11.", str(TOOLS / "nvim-venv" / "bin" / "nvim"),
           ("--headless", "--clean", "-n", "-i", "NONE", "-c", "lua dofile(os.getenv('GG_DRIVER'))"),
           "nvim/e2e.lua", "nvim/init-0.11.lua", SIGMOID),
    # -q, not -Q: Debian's site-start puts elpa-eglot on the load-path. The newline on stdin is
    # the RET that accepts Eglot's default action, the preferred one.
    Editor("emacs-eglot", "emacs 28.", "emacs", ("--batch", "-q", "-l", "{driver}"),
           "emacs/e2e.el", "emacs/init.el", RESIDUAL, stdin="\n"),
    Editor("vim-ale", "vim 9.", "vim", ("-N", "-u", "NONE", "-i", "NONE", "-n", "-es", "-S", "{driver}"),
           "vim/e2e.vim", "vim/gradguard.vim", SIGMOID, pyproject=False),  # the snippet's fallback root
]
SKIPPED = {s.strip() for s in os.environ.get("GRADGUARD_SKIP_EDITORS", "").split(",") if s.strip()}


def fail(message: str) -> None:
    """A failure whose message says it all (the editor's and the server's logs), no traceback."""
    pytest.fail(message, pytrace=False)


@dataclass
class Run:
    """One editor run and everything needed to explain its failure."""
    editor: Editor
    work: Path
    returncode: int | None = None
    output: str = ""
    seconds: float = 0.0

    @property
    def report(self) -> dict:
        """What the driver wrote after its last step (it rewrites the file after each)."""
        try:
            return json.loads((self.work / "report.json").read_text())
        except (OSError, ValueError):
            return {}

    def explain(self, problem: str) -> str:
        def tail(path: Path, lines: int) -> list[str]:
            text = path.read_text(errors="replace").splitlines()[-lines:] if path.exists() else ["(none)"]
            return [line if len(line) < 400 else line[:400] + " ..." for line in text]
        return "\n".join([
            f"{self.editor.id}: {problem}",
            f"--- {self.editor.binary}: exit status {self.returncode} after {self.seconds:.1f} s "
            f"(None: killed after {EDITOR_TIMEOUT_S} s); its output:",
            self.output.strip() or "(none)",
            *(["--- the driver's progress log:", *tail(self.work / "progress.log", 50)]
              if (self.work / "progress.log").exists() else []),
            "--- the driver's report:", json.dumps(self.report),
            "--- the end of the server's log:", *tail(self.work / "server.log", 40),
        ])


def expected_fix(case: Path) -> tuple[int, str, str]:
    """The marked line, the preferred quick fix's title, and the file as that fix leaves it."""
    text = case.read_text()
    marked = sorted(n for n, code in markers(case) if code == "GG001")
    assert len(marked) == 1, f"{case.name}: expected one `# expect: GG001` line"
    finding, = [f for f in analyse_document(Document.parse(str(case), text), Settings()) if f.code == "GG001"]
    fix = finding.fixes[0]
    assert fix.applicability is Applicability.SAFE, f"{case.name}: its first fix is not safe"
    return marked[0], f"gradguard: {fix.message}", apply_edits(text, list(fix.edits))


def run_editor(editor: Editor, tmp_path: Path) -> tuple[Run, Path]:
    """The editor, headless, on a copy of its case in a project folder; gradguard on its PATH."""
    work = tmp_path
    project = work / "project"
    project.mkdir()
    if editor.pyproject:
        (project / "pyproject.toml").write_text('[project]\nname = "case"\nversion = "0"\n')
    case = project / editor.case
    case.write_text((CASES / editor.case).read_text())
    # `gradguard` as the editor finds it, logging to server.log
    bin_dir = work / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "gradguard"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(str(GRADGUARD))} "$@" '
                       f'--log-file {shlex.quote(str(work / "server.log"))} -v\n')
    wrapper.chmod(0o755)
    home = work / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items()
           if key not in {"VIMINIT", "EXINIT", "MYVIMRC", "NVIM", "NVIM_APPNAME", "NVIM_LISTEN_ADDRESS",
                          "EMACSLOADPATH", "EMACSDATA", "EMACSPATH", "VIRTUAL_ENV"}}
    env.update({
        "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home), "TMPDIR": str(work),
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": str(home / ".cache"),
        "GG_FILE": str(case), "GG_INIT": str(DRIVERS / editor.init), "GG_DRIVER": str(DRIVERS / editor.driver),
        "GG_REPORT": str(work / "report.json"), "GG_LOG": str(work / "progress.log"),
        "GG_TIMEOUT_MS": str(WAIT_MS),
    })
    command = [editor.binary, *(a.format(driver=DRIVERS / editor.driver) for a in editor.args)]
    run = Run(editor, work)
    start = time.monotonic()
    process = subprocess.Popen(command, cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)
    try:
        run.output, _ = process.communicate(editor.stdin, timeout=EDITOR_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the editor and the server it started
        run.output, _ = process.communicate()
    else:
        run.returncode = process.returncode
    run.seconds = time.monotonic() - start
    return run, case


_proofs: dict[tuple[str, str], dict] = {}


def prove(case_name: str, fixed: Path) -> dict:
    """Run the original case and the fixed file with torch, in one process; once per fixed text."""
    key = (case_name, fixed.read_text())
    if key not in _proofs:
        result = subprocess.run([sys.executable, str(DRIVERS / "prove.py"), str(CASES / case_name), str(fixed)],
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0 and result.stdout.strip(), result.stdout + result.stderr
        _proofs[key] = json.loads(result.stdout.strip().splitlines()[-1])
    return _proofs[key]


@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize("editor", EDITORS, ids=[e.id for e in EDITORS])
def test_the_editor_shows_gg001_and_applies_the_preferred_fix(editor: Editor, tmp_path: Path):
    if editor.id in SKIPPED or SKIPPED & {"1", "all"}:
        pytest.skip(f"GRADGUARD_SKIP_EDITORS={os.environ['GRADGUARD_SKIP_EDITORS']}")
    if shutil.which(editor.binary) is None:
        pytest.fail(f"{editor.id}: {editor.binary} is not installed; `make editors` installs it "
                    f"(or set GRADGUARD_SKIP_EDITORS={editor.id} to skip it)")
    marked_line, preferred, fixed_text = expected_fix(CASES / editor.case)

    run, case = run_editor(editor, tmp_path)
    report = run.report
    print(f"{editor.id} ({report.get('editor')}) on {editor.case}: {run.seconds:.1f} s; "
          + ", ".join(f"{s['name']} {s['ms']:.0f} ms" for s in report.get("steps") or []))

    if run.returncode != 0:
        fail(run.explain(f"the driver failed: {report.get('error', 'no report')}"))
    if not str(report.get("editor", "")).startswith(editor.version):
        fail(run.explain(f"expected {editor.version}x, the editor is {report.get('editor')}"))
    lines = sorted({d["line"] for d in report.get("diagnostics") or [] if d.get("code") == "GG001"})
    if lines != [marked_line]:
        fail(run.explain(f"GG001 shown at lines {lines}, expected at line {marked_line}"))
    if report.get("chosen") != preferred:
        fail(run.explain(f"the editor applied {report.get('chosen')!r}, not the preferred {preferred!r}"))
    actions = report.get("actions") or []
    flagged = [a["title"] for a in actions if a.get("preferred")]
    if any("preferred" in a for a in actions) and flagged != [preferred]:  # ALE does not show isPreferred
        fail(run.explain(f"actions marked preferred: {flagged}"))
    saved = case.read_text()
    if saved != fixed_text:
        fail(run.explain(f"the saved file is not the fixed case:\n{saved}\n--- expected:\n{fixed_text}"))

    proof = prove(editor.case, case)
    assert proof["original"] is not None and proof["original"].startswith("RuntimeError:") \
        and "modified by an inplace operation" in proof["original"], \
        f"{editor.case} as written should fail in backward(), got: {proof['original']}"
    assert proof["fixed"] is None, f"the file {editor.id} saved does not run cleanly:\n{proof['fixed']}"


def test_the_docs_show_the_configurations_tested_here():
    """Each editor's configuration in docs/editors.md is, word for word, the one the tests use."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", DOCS.read_text(), re.MULTILINE | re.DOTALL)
    for init in sorted({e.init for e in EDITORS}):
        snippet = (DRIVERS / init).read_text()
        assert any(snippet.strip() in block for block in blocks), \
            f"docs/editors.md has no code block containing tests/editors/{init}"
