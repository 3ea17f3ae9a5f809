"""Faults around the files `check` reads and `--fix` writes: what is on disk afterwards, byte for
byte, and what the user is told.

Every Unicode line break and line ending, a full disk (`RLIMIT_FSIZE`), a file edited while it is
fixed, an immutable file (`chattr +i`: root ignores modes), two `--fix` runs on one tree, and the
files that are no source files at all (FIFOs, devices, link loops, broken caches and configs).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
from pathlib import Path

import pytest

from gradguard import engine
from gradguard.__main__ import main

from helpers import GRADGUARD, ROOT, write

pytestmark = pytest.mark.usefixtures("isolated")

# `y += 1` at line 4 (GG001, safe fix `y = y + 1`); the leaf's `+=` at line 6 (GG002, unsafe fix: no_grad).
SAVED = "import torch{n}x = torch.ones(2, requires_grad=True){n}y = x.sigmoid(){n}y += 1{n}y.sum().backward(){n}"
LEAF = "import torch{n}w = torch.ones(2, requires_grad=True){n}w += 1{n}"


def check(capsys, *args: str | Path) -> tuple[int, str, str]:
    code = main(["check", "--no-cache", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("separator", ["", "\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"],
                         ids=["none", "ff", "vt", "fs", "gs", "rs", "nel", "ls", "ps"])
def test_fix_keeps_line_endings_and_every_unicode_line_break(tmp_path, capsys, newline, separator):
    """Python (and LSP) end lines at \\n, \\r\\n and \\r only: a form feed or U+2028 is inside a line."""
    before = SAVED.format(n=newline).replace("y.sum()", f"# {separator}note{newline}y.sum()").replace(
        "import torch", f"import torch  # {separator}")
    path = tmp_path / "model.py"
    path.write_bytes(before.encode())
    code, out, err = check(capsys, "--fix", path)
    assert (code, out, err) == (0, "Found 1 problem (1 fixed, 0 remaining).\n", "")
    assert path.read_bytes() == before.replace(f"y += 1{newline}", f"y = y + 1{newline}").encode()


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_inserted_lines_take_the_files_line_ending(tmp_path, capsys, newline):
    path = tmp_path / "leaf.py"
    path.write_bytes(LEAF.format(n=newline).encode())
    code, out, err = check(capsys, "--fix", "--unsafe-fixes", path)
    assert code == 0
    expected = f"import torch{newline}w = torch.ones(2, requires_grad=True){newline}with torch.no_grad():{newline}    w += 1{newline}"
    assert path.read_bytes() == expected.encode()


def test_mixed_line_endings_are_kept_each_as_it_was(tmp_path, capsys):
    before = "import torch\r\nx = torch.ones(2, requires_grad=True)\ny = x.sigmoid()\ry += 1\r\ny.sum().backward()\n"
    path = tmp_path / "mixed.py"
    path.write_bytes(before.encode())
    assert check(capsys, "--fix", path)[0] == 0
    assert path.read_bytes() == before.replace("y += 1", "y = y + 1").encode()


def test_diff_shows_the_files_own_line_endings(tmp_path, capsys):
    path = tmp_path / "crlf.py"
    path.write_bytes(SAVED.format(n="\r\n").encode())
    code, out, err = check(capsys, "--diff", path)
    assert code == 1
    assert "-y += 1\r\n+y = y + 1\r\n" in out
    assert path.read_bytes() == SAVED.format(n="\r\n").encode()


def test_encoding_and_bom_are_kept(tmp_path, capsys):
    latin = ("# -*- coding: latin-1 -*-\n" + SAVED.format(n="\n").replace("y.sum()", "s = 'café'\ny.sum()")).encode("latin-1")
    bom = b"\xef\xbb\xbf" + SAVED.format(n="\n").encode()
    (tmp_path / "latin.py").write_bytes(latin)
    (tmp_path / "bom.py").write_bytes(bom)
    code, out, err = check(capsys, "--fix", tmp_path)
    assert (code, out, err) == (0, "Found 2 problems (2 fixed, 0 remaining).\n", "")
    assert (tmp_path / "latin.py").read_bytes() == latin.replace(b"y += 1", b"y = y + 1")
    assert (tmp_path / "bom.py").read_bytes() == bom.replace(b"y += 1", b"y = y + 1")


def test_fix_keeps_the_mode_and_writes_through_a_link(tmp_path, capsys):
    real = write(tmp_path / "real" / "model.py", SAVED.format(n="\n"))
    real.chmod(0o751)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    assert check(capsys, "--fix", link)[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == SAVED.format(n="\n").replace("y += 1", "y = y + 1")
    assert real.stat().st_mode & 0o777 == 0o751
    assert sorted(p.name for p in real.parent.iterdir()) == ["model.py"]  # no temporary file left


def test_a_full_disk_leaves_the_file_whole(tmp_path):
    """The fixed text is written beside the file and renamed over it: a write that fails (here the
    file-size limit, as a full disk would) leaves the original as it was."""
    before = SAVED.format(n="\n") + "# padding\n" * 400
    path = write(tmp_path / "model.py", before)
    limit = len(before) // 2

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run([str(GRADGUARD), "check", "--no-cache", "--fix", str(path)], capture_output=True,
                          text=True, timeout=120, preexec_fn=small_files)
    assert proc.returncode == 2
    assert f"gradguard: {path}: not fixed: File too large" in proc.stderr
    assert "model.py:4:1: GG001" in proc.stdout  # reported as found, not as fixed
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "pyproject.toml"]  # no temporary file left


def test_a_file_edited_while_it_is_fixed_keeps_the_edit_and_is_fixed_as_edited(tmp_path, capsys, monkeypatch):
    """The fix of the text read first is not written over the edit: the edited text is read again
    and fixed, and what is reported holds for it."""
    path = write(tmp_path / "model.py", SAVED.format(n="\n"))
    edited = SAVED.format(n="\n") + "print('typed meanwhile')\n"
    analyse = engine.fix_document  # check imports the engine when it fixes: patched there, it is seen

    def edit_meanwhile(*args, **kwargs):
        result = analyse(*args, **kwargs)
        if path.read_text() != edited:
            path.write_text(edited)
        return result

    monkeypatch.setattr(engine, "fix_document", edit_meanwhile)
    code, out, err = check(capsys, "--fix", path)
    assert (code, out, err) == (0, "Found 1 problem (1 fixed, 0 remaining).\n", "")
    assert path.read_text() == edited.replace("y += 1", "y = y + 1")


def test_a_file_that_keeps_changing_while_it_is_fixed_is_reported_not_fixed(tmp_path, capsys, monkeypatch):
    """Read and fixed three times, changed each time before the fix is written: reported as not
    fixed, with the findings of the text last read."""
    path = write(tmp_path / "model.py", SAVED.format(n="\n"))
    analyse, edits = engine.fix_document, []

    def edit_meanwhile(*args, **kwargs):
        result = analyse(*args, **kwargs)
        edits.append(f"print({len(edits)})\n")
        path.write_text(SAVED.format(n="\n") + "".join(edits))
        return result

    monkeypatch.setattr(engine, "fix_document", edit_meanwhile)
    code, out, err = check(capsys, "--fix", "--output-format", "concise", path)
    assert len(edits) == 3 and path.read_text() == SAVED.format(n="\n") + "".join(edits)
    assert code == 2 and out.startswith(f"{path}:4:1: GG001 [error] [*] `y` is the output of `x.sigmoid` (line 3)")
    assert err == f"gradguard: {path}: not fixed: the file changed while gradguard was fixing it; not written\n"
    assert out.endswith("\nFound 1 problem (0 fixed, 1 remaining).\n")


def test_an_immutable_file_is_reported_and_the_others_are_fixed(tmp_path, capsys):
    frozen = write(tmp_path / "a_frozen.py", SAVED.format(n="\n"))
    other = write(tmp_path / "b_other.py", SAVED.format(n="\n"))
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(frozen)]).returncode != 0:
        pytest.skip("chattr +i is not available on this file system")
    try:
        code, out, err = check(capsys, "--fix", tmp_path)
    finally:
        subprocess.run(["chattr", "-i", str(frozen)], check=True)
    assert code == 2
    assert err == f"gradguard: {frozen}: not fixed: Permission denied\n"
    assert out.endswith("\n\nFound 2 problems (1 fixed, 1 remaining).\n")
    assert frozen.read_text() == SAVED.format(n="\n")
    assert other.read_text() == SAVED.format(n="\n").replace("y += 1", "y = y + 1")


def test_two_fix_runs_racing_on_one_tree_both_report_the_fixed_tree(tmp_path):
    """The run that loses the race for a file (the other wrote its fix first) fixes the file as it
    now is: it reported the findings of the text it had read, which the other had fixed (~1,000 on
    a large tree), and exited 2. Both now print exactly the findings left in the final files, and
    those files are one run's fix."""
    cases = sorted(p for p in (ROOT / "tests" / "cases").glob("*.py") if not p.name.endswith("_ok.py"))
    raced, alone = tmp_path / "raced", tmp_path / "alone"
    for tree in (raced, alone):
        for copy in range(3):
            (tree / f"c{copy}").mkdir(parents=True)
            for case in cases:
                shutil.copy(case, tree / f"c{copy}" / case.name)
    command = [str(GRADGUARD), "check", "--no-cache", "--fix", "--output-format", "concise", "."]
    single = subprocess.run(command, cwd=alone, capture_output=True, text=True, timeout=300)
    runs = [subprocess.Popen(command, cwd=raced, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    outputs = [(*r.communicate(timeout=300), r.returncode) for r in runs]
    final = subprocess.run([str(GRADGUARD), "check", "--no-cache", "--output-format", "concise", "--quiet", "."], cwd=raced,
                           capture_output=True, text=True, timeout=300)
    assert final.returncode == 1 and final.stdout == _findings(single.stdout) and final.stdout.count("GG00") > 30
    for out, err, code in outputs:
        assert (code, _findings(out)) == (1, final.stdout), err
    assert sum(_fixed(out) for out, _, _ in outputs) == _fixed(single.stdout) > 100
    for path in alone.rglob("*.py"):
        assert (raced / path.relative_to(alone)).read_text() == path.read_text(), path


def _findings(out: str) -> str:
    """A concise run's output without its closing summary."""
    return "".join(line for line in out.splitlines(keepends=True) if not line.startswith(("Found ", "No fixes ")))


def _fixed(out: str) -> int:
    """How many problems a `--fix` run's summary says it fixed."""
    summary = next(line for line in out.splitlines() if line.startswith("Found"))
    return int(summary.split("(")[1].split()[0])


# --- what is no source file --------------------------------------------------------------------

def test_fifo_device_and_link_loops_are_reported_without_hanging(tmp_path, capsys):
    write(tmp_path / "model.py", SAVED.format(n="\n"))
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "loop_a.py").symlink_to(tmp_path / "loop_b.py")
    (tmp_path / "loop_b.py").symlink_to(tmp_path / "loop_a.py")
    code, out, err = check(capsys, "--format", "json", tmp_path, tmp_path / "fifo.py")
    messages = {(Path(d["filename"]).name, d["code"], d["message"]) for d in json.loads(out)}
    assert messages == {
        ("fifo.py", "GG000", "gradguard could not read this file: not a regular file"),  # named: reported
        ("zero.py", "GG000", "gradguard could not read this file: not a regular file"),
        ("loop_a.py", "GG000", "gradguard could not read this file: Too many levels of symbolic links"),
        ("loop_b.py", "GG000", "gradguard could not read this file: Too many levels of symbolic links"),
        ("model.py", "GG001", next(d["message"] for d in json.loads(out) if d["code"] == "GG001")),
    }
    assert code == 1


def test_a_file_over_the_byte_limit_is_skipped_unread(tmp_path, capsys, monkeypatch):
    from gradguard.source import files

    monkeypatch.setattr(files, "MAX_BYTES", 100)
    write(tmp_path / "big.py", SAVED.format(n="\n") + "#" * 200 + "\n")
    code, out, err = check(capsys, "--format", "json", tmp_path)
    [d] = json.loads(out)
    assert (code, d["code"], d["severity"]) == (0, "GG000", "info")
    assert d["message"] == "gradguard skips this file: it has 294 bytes, over the limit of 100"


def test_pep_263_encodings_are_read_and_other_encodings_without_torch_are_skipped(tmp_path, capsys):
    (tmp_path / "latin.py").write_bytes(("# -*- coding: latin-1 -*-\n" + SAVED.format(n="\n")
                                         + "s = 'café'\n").encode("latin-1"))
    (tmp_path / "notes.py").write_bytes("s = 'café'\n".encode("latin-1"))  # no torch: no concern
    code, out, err = check(capsys, "--format", "json", tmp_path)
    assert [(Path(d["filename"]).name, d["location"]["row"], d["code"]) for d in json.loads(out)] == [
        ("latin.py", 5, "GG001")]


@pytest.mark.parametrize("entry", ["[]", "null", '"x"', "{}", '{"findings": 3}', "{"])
def test_a_broken_cache_entry_is_a_miss(tmp_path, capsys, entry):
    path = write(tmp_path / "model.py", SAVED.format(n="\n"))
    cache = tmp_path / "cache"
    assert main(["check", "--cache-dir", str(cache), str(path)]) == 1
    [stored] = [p for p in cache.glob("*.json")]
    stored.write_text(entry)
    capsys.readouterr()
    assert main(["check", "--output-format", "concise", "--cache-dir", str(cache), str(path)]) == 1
    out, err = capsys.readouterr()
    assert out.startswith(f"{path}:4:1: GG001 [error] [*] ") and len(out.splitlines()) == 3
    assert (out.split("\n", 1)[1], err) == ("Found 1 problem.\n[*] 1 fixable with the `--fix` option.\n", "")


@pytest.mark.parametrize("toml, message", [
    ('tool = "x"\n', "`tool` must be a table, not str"),
    ('[tool]\ngradguard = 3\n', "`tool.gradguard` must be a table, not int"),
    ('[tool.gradguard]\nverify = "fast"\n', "[tool.gradguard.verify] must be a table"),
])
def test_a_pyproject_of_the_wrong_shape_names_the_file(tmp_path, toml, message):
    write(tmp_path / "pyproject.toml", toml)
    path = write(tmp_path / "model.py", SAVED.format(n="\n"))
    command = "verify" if "verify" in toml else "check"
    proc = subprocess.run([str(GRADGUARD), command, str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == f"gradguard: {tmp_path / 'pyproject.toml'}: {message}\n"


def test_a_file_with_other_hard_links_is_fixed_in_place_so_every_name_sees_it(tmp_path, capsys):
    path = write(tmp_path / "model.py", SAVED.format(n="\n"))
    other = tmp_path / "same.py.bak"
    os.link(path, other)
    assert check(capsys, "--fix", path)[0] == 0
    assert other.read_text() == path.read_text() == SAVED.format(n="\n").replace("y += 1", "y = y + 1")
    assert os.stat(path).st_ino == os.stat(other).st_ino


def test_a_file_the_user_may_not_write_is_not_replaced_though_its_folder_allows_it(tmp_path, capsys, monkeypatch):
    path = write(tmp_path / "model.py", SAVED.format(n="\n"))
    monkeypatch.setattr(os, "access", lambda target, mode: mode != os.W_OK)  # root may write anything: pretend not
    code, out, err = check(capsys, "--fix", path)
    assert code == 2
    assert f"gradguard: {path}: not fixed: Permission denied\n" in err
    assert path.read_text() == SAVED.format(n="\n")
