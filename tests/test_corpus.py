"""The shared labelled corpus (../shared/corpus: cases/ and programs/): PyTorch confirms every label,
gradguard finds every one.

label.py runs each case with torch (one subprocess per case, ~1.5 s each); score.py runs
`gradguard check --format json --no-config` on the folder and compares diagnostics to the
`# expect: GGnnn` markers.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from helpers import GRADGUARD, ROOT, assert_labels_agree


@pytest.mark.parametrize("folder", ["cases", "programs"])
def test_shared_corpus_labels_agree_with_torch(folder, corpus, tmp_path):
    """Every `# expect:` marker is what torch itself does when the case runs (and `_ok` cases run clean), as
    label.py judges it (`helpers.assert_labels_agree`)."""
    cases = sorted((corpus / folder).glob("*.py"))
    assert cases
    assert_labels_agree(cases, corpus, tmp_path)


@pytest.mark.parametrize("folder", ["cases", "programs"])
def test_gradguard_finds_every_shared_case_and_nothing_else(folder, corpus):
    proc = subprocess.run(
        [sys.executable, str(corpus / "score.py"), str(corpus / folder),
         "--cmd", f"{shlex.quote(str(GRADGUARD))} check --format json --no-config"],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert re.search(r"^recall 1\.000 \(\d+/\d+\)  precision 1\.000 \(\d+/\d+\)  false alarms 0$", report,
                     re.MULTILINE), report
    assert re.search(r"^\d+ passed, 0 failed$", report, re.MULTILINE), report
