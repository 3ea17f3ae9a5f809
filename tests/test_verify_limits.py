"""`gradguard verify`'s limits hold for the whole process tree of the user's code: its memory,
its end (no process outlives the run or holds gradguard's pipes) and gradguard's own end (a
signal or a disconnected editor ends the run too).

Each test runs a small program that escapes a per-process limit the way user code does:
shared mappings, forked workers, `subprocess` children in sessions of their own.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lsp_wire import framed

GRADGUARD = [sys.executable, "-m", "gradguard"]
pytestmark = pytest.mark.xdist_group("heavy")  # gigabytes and process trees: never beside the editors' timed tests


def script(folder: Path, text: str, memory: int | None = None) -> Path:
    if memory is not None:
        (folder / "pyproject.toml").write_text(f"[tool.gradguard.verify]\nmemory = {memory}\n")
    path = folder / "run.py"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def verify(path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*GRADGUARD, "verify", "--device", "cpu", "--format", "json", *args, str(path)],
                          capture_output=True, text=True, timeout=timeout, cwd=path.parent)


def default_signals() -> None:
    """As from a terminal: under `nohup` (or a CI runner that ignores SIGHUP) gradguard rightly
    leaves an ignored signal ignored."""
    for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_DFL)


def gone(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    for _ in range(50):
        if not status.exists() or "zombie" in status.read_text():
            return True
        time.sleep(0.1)
    return False


RAISE_IT = "raise the limit with `memory = MIB` in [tool.gradguard.verify] (pyproject.toml)"
MEMORY_PROBLEM = ("gradguard could not verify this file: the run used more than its memory limit of 1024 MiB and "
                  "was stopped (enforced by RLIMIT_DATA per process, and the process tree's proportional set "
                  f"size, measured every 0.2 s); {RAISE_IT}")
ALLOCATION_PROBLEM = ("the run tried to allocate more than its memory limit of 2048 MiB and was stopped (enforced by "
                      f"RLIMIT_DATA, which fails such an allocation at once); {RAISE_IT}")


@pytest.mark.parametrize("program", [
    """
    import mmap, time
    shared = mmap.mmap(-1, 1600 << 20)  # shared memory: RLIMIT_DATA does not count it
    for offset in range(0, len(shared), 4096):
        shared[offset] = 1
    time.sleep(30)
    """,
    """
    import os, time
    for _ in range(3):  # three workers under 1 GiB each, 1.8 GiB together
        if os.fork() == 0:
            block = bytearray(600 << 20)
            time.sleep(30)
            os._exit(0)
    time.sleep(30)
    """,
], ids=["shared-mapping", "forked-workers"])
def test_the_memory_limit_covers_the_whole_tree(tmp_path, program):
    started = time.monotonic()
    run = verify(script(tmp_path, program, memory=1024))
    assert time.monotonic() - started < 25
    assert run.returncode == 2
    [finding] = json.loads(run.stdout)
    assert (finding["code"], finding["message"]) == ("GV002", MEMORY_PROBLEM)


@pytest.mark.parametrize("allocation", ["bytearray(20 * 2**30)", "torch.empty(20 * 2**30, dtype=torch.uint8)"])
def test_an_allocation_past_the_memory_limit_stops_the_run_as_the_time_limit_does(tmp_path, allocation):
    """A single allocation past the limit fails at once (`RLIMIT_DATA`): the run stops there, a
    GV002 and exit status 2 with a line naming the limit and how to raise it, never a finding of the
    code (GV001, exit 1); what the run found before it still counts."""
    path = script(tmp_path, f"""
        import torch
        x = torch.ones(2, requires_grad=True)
        y = x.sigmoid()
        y.mul_(2)
        big = {allocation}
        print("never here")
        """, memory=2048)
    run = verify(path)
    assert run.returncode == 2
    assert [(f["code"], f["location"]["row"], f["message"]) for f in json.loads(run.stdout)] == [
        ("GV002", 1, f"gradguard could not verify this file: {ALLOCATION_PROBLEM}"),
        ("GG001", 4, "`y.mul_(2)` changes in place a float32[2] tensor that `x.sigmoid()` saved for backward (its "
                     "output) at line 3: backward through it will raise \"one of the variables needed for gradient computation has been modified by an inplace operation\". Found running on cpu.")]
    assert run.stderr.splitlines()[-1] == f"gradguard: could not verify {path}: {ALLOCATION_PROBLEM}"
    assert "never here" not in run.stderr


def test_the_editor_says_an_allocation_past_the_memory_limit_stopped_the_run(tmp_path):
    from test_verify import _verify_over_stdio

    path = script(tmp_path, "big = bytearray(20 * 2**30)\n", memory=2048)
    reply = _verify_over_stdio(tmp_path, path.as_uri())
    assert reply["result"]["problem"] == ALLOCATION_PROBLEM
    assert [f["code"] for f in reply["result"]["findings"]] == ["GV002"]


@pytest.mark.parametrize("how", ["subprocess.Popen(['sleep', '300'])",
                                 "subprocess.Popen(['sleep', '300'], start_new_session=True)"])
def test_no_process_outlives_the_run_or_holds_its_pipes(tmp_path, how):
    path = script(tmp_path, f"""
        import pathlib, subprocess
        child = {how}
        pathlib.Path(__file__).with_suffix(".pid").write_text(str(child.pid))
        """)
    started = time.monotonic()
    run = verify(path, timeout=60)  # capture_output: returns only when no process holds the pipes
    assert time.monotonic() - started < 30
    assert (run.returncode, json.loads(run.stdout)) == (0, [])
    assert gone(int((tmp_path / "run.pid").read_text()))


def test_no_process_outlives_the_run_whatever_it_strips(tmp_path):
    """A daemon that leaves the run's session and process group and sheds its environment (double
    fork, `setsid`, `execve` with an empty environment) is still the run's: the run's orphans are
    reaped by a process of the run that runs no user code, so the tree is all its descendants."""
    path = script(tmp_path, """
        import os, pathlib, time
        pid_file = pathlib.Path(__file__).with_suffix(".pid")
        if os.fork() == 0:
            if os.fork() == 0:
                os.setsid()
                pid_file.write_text(str(os.getpid()))
                os.execve("/bin/sleep", ["sleep", "300"], {})
            os._exit(0)
        os.wait()
        while not pid_file.exists():
            time.sleep(0.05)
        """)
    started = time.monotonic()
    run = verify(path, timeout=60)  # capture_output: returns only when no process holds the pipes
    assert time.monotonic() - started < 30
    assert (run.returncode, json.loads(run.stdout)) == (0, [])
    assert gone(int((tmp_path / "run.pid").read_text()))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_a_signal_to_gradguard_ends_the_run(tmp_path, signum):
    path = script(tmp_path, """
        import os, pathlib, subprocess, time
        child = subprocess.Popen(["sleep", "300"], start_new_session=True)
        pathlib.Path(__file__).with_suffix(".pid").write_text(f"{os.getpid()} {child.pid}")
        time.sleep(300)
        """)
    process = subprocess.Popen([*GRADGUARD, "verify", "--device", "cpu", str(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=tmp_path, preexec_fn=default_signals)
    pids = tmp_path / "run.pid"
    deadline = time.monotonic() + 60
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signum)
    process.communicate(timeout=20)
    assert process.returncode == (-signum if signum == signal.SIGKILL else 128 + signum)  # SIGKILL: the reaper ends the run
    assert all(gone(int(pid)) for pid in pids.read_text().split())


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_that_is_no_positive_finite_number_is_refused(tmp_path, value):
    path = script(tmp_path, "print('never run')\n")
    run = subprocess.run([*GRADGUARD, "verify", "--timeout", value, str(path)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.splitlines()[-1].startswith("gradguard verify: error: argument --timeout: ")
    assert "never run" not in run.stderr


def test_an_editor_that_disconnects_mid_verify_ends_the_run(tmp_path):
    path = script(tmp_path, """
        import os, pathlib, subprocess, time
        child = subprocess.Popen(["sleep", "300"], start_new_session=True)
        pathlib.Path(__file__).with_suffix(".pid").write_text(f"{os.getpid()} {child.pid}")
        time.sleep(300)
        """)
    server = subprocess.Popen([*GRADGUARD, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, cwd=tmp_path)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
            "initializationOptions": {"trusted": True, "verify": {"device": "cpu"}}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": path.as_uri(), "languageId": "python", "version": 1, "text": path.read_text()}}},
        {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
         "params": {"command": "gradguard.verify", "arguments": [path.as_uri()]}},
    ]
    for message in messages:
        server.stdin.write(framed(json.dumps(message).encode()))
    server.stdin.flush()
    pids = tmp_path / "run.pid"
    deadline = time.monotonic() + 60
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pids.exists(), "the run did not start"
    server.stdin.close()  # the editor is gone
    server.wait(timeout=30)
    assert all(gone(int(pid)) for pid in pids.read_text().split())


def test_a_torch_other_than_the_op_tables_is_said_once(capsys, monkeypatch):
    from gradguard.knowledge.ops import torch_version
    from gradguard.verify import runner

    monkeypatch.setattr(runner, "_warned", False)
    table = torch_version()
    runner._warn_about_torch(table.split("+")[0] + "+cu121")  # the same release, another build: no word
    assert capsys.readouterr().err == ""
    runner._warn_about_torch("2.11.0+cu126")
    runner._warn_about_torch("2.11.0+cu126")
    assert capsys.readouterr().err == (
        f"gradguard: torch 2.11.0+cu126 runs the code, but gradguard's knowledge of what each op saves was "
        f"generated from torch {table}: the static findings may differ from what this torch does\n")
