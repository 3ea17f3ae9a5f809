"""What a team adopting gradguard copies or runs first: the GitHub Actions workflow of docs/ci/
(valid by GitHub's workflow schema, checked offline, and its gradguard steps doing here what it
says they do) and `make demo`, which shows the examples' findings and succeeds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from helpers import GRADGUARD, ROOT

WORKFLOW = ROOT / "docs" / "ci" / "gradguard.yml"


def _validate(path: Path) -> subprocess.CompletedProcess:
    """check-jsonschema (a test extra) with the GitHub workflow schema it ships: no network."""
    executable = Path(sys.executable).with_name("check-jsonschema")
    assert executable.is_file(), "check-jsonschema is missing: pip install -e '.[test]'"
    return subprocess.run([str(executable), "--builtin-schema", "vendor.github-workflows", str(path)],
                          capture_output=True, text=True, timeout=120)


def test_the_workflow_is_valid_for_github(tmp_path):
    valid = _validate(WORKFLOW)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    broken = tmp_path / "broken.yml"  # the schema is applied: a job GitHub would refuse is refused
    broken.write_text(WORKFLOW.read_text().replace("runs-on: ubuntu-latest", "runs-on: [1]"))
    assert _validate(broken).returncode == 1


def test_the_workflows_gradguard_steps_upload_sarif_and_annotate(tmp_path):
    """Its `gradguard` steps run as Actions runs them (`bash -e`), on a project with a GG001."""
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["gradguard"]["steps"]
    sarif_step, annotations_step = [step["run"] for step in steps if step.get("run", "").startswith("gradguard ")]
    upload = next(step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    shutil.copy(ROOT / "examples" / "residual_block.py", tmp_path / "residual_block.py")
    env = {**os.environ, "PATH": f"{GRADGUARD.parent}{os.pathsep}{os.environ['PATH']}"}

    def step(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-e", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)

    sarif = step(sarif_step)
    assert (sarif.returncode, sarif.stdout) == (0, ""), sarif.stderr
    log = json.loads((tmp_path / upload["with"]["sarif_file"]).read_text())
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in log["runs"][0]["results"]] == [("GG001", 26)]
    annotations = step(annotations_step)
    assert annotations.returncode == 1  # the job fails on the finding
    assert annotations.stdout.startswith("::error file=residual_block.py,line=26,col=9,endLine=26,endColumn=24,"
                                         "title=GG001::GG001 `out` is the output of `self.relu` (line 25)")
    assert annotations.stdout.count("\n") == 1 and annotations.stderr == ""


def test_make_demo_shows_the_findings_and_succeeds(tmp_path):
    """The examples have bugs: finding them is what the demo shows, not make's `Error 1 (ignored)`."""
    stamp = tmp_path / "installed"  # the set-up is taken as done: the gradguard under test runs
    demo = subprocess.run(["make", "--no-print-directory", "-o", str(stamp), "demo", f"STAMP={stamp}",
                           f"BIN={GRADGUARD.parent}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert demo.returncode == 0 and demo.stderr == "", demo.stderr
    assert "examples/residual_block.py:26:9: GG001 [error]" in demo.stdout
    assert demo.stdout.splitlines()[-2].startswith("Found ")


def test_the_readme_starts_with_what_a_user_does():
    """Install, run, pre-commit, CI, the editor, in that order; the contributors' `make` after."""
    readme = (ROOT / "README.md").read_text()
    headings = [line for line in readme.splitlines() if line.startswith("## ")]
    assert headings[:5] == ["## Install", "## Run it on your code", "## Add it to pre-commit", "## Add it to CI",
                            "## Install the editor extension"]
    assert readme.index("make demo") > readme.index("## Contributing")
    for command in ("pipx install gradguard", "uv tool install gradguard", "pip install gradguard"):
        assert command in readme.split("## Run it on your code")[0], command
    config = yaml.safe_load(readme.split("## Add it to pre-commit")[1].split("```yaml\n")[1].split("```")[0])
    hooks = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {hook["id"] for hook in config["repos"][0]["hooks"]} <= hooks
    assert "docs/ci/gradguard.yml" in readme.split("## Add it to CI")[1].split("\n## ")[0]
