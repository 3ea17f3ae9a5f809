"""`gradguard lsp` while a document settles in: its first diagnostics do not wait for the files
it imports; those are then read one by one, and a change made meanwhile is answered between two
of them, not after all of them. Once all are read, the document is analysed again with them.

Raw JSON-RPC, so that the order in which the server's messages arrive is exact.
"""

import asyncio
import gc
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gradguard.analysis.budget import Cancelled
from gradguard.config import Settings
from gradguard.engine import OpenDocument, project_index
from gradguard.lsp.scheduler import IDLE, Scheduler

from lsp_wire import framed, read_message

GATES = 5  # imported files, each about 800 lines: reading one takes a noticeable time
FILLERS = 80
WAIT = 120.0
GATE = '''

class Gate{k}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))
'''
FILLER = '''

class Filler{i}(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.a = nn.Linear(width, width)
        self.b = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Dropout(0.1))

    def forward(self, x):
        return self.b(torch.tanh(self.a(x))) + x
'''


def make_project(root: Path) -> Path:
    """`main.py`, which changes in place (`+=`) the output of a gate from each of GATES files."""
    for k in range(GATES):
        (root / f"gates_{k}.py").write_text("import torch\nimport torch.nn as nn\n" + GATE.format(k=k)
                                            + "".join(FILLER.format(i=i) for i in range(FILLERS)))
    lines = ["import torch", "import torch.nn as nn", *(f"from gates_{k} import Gate{k}" for k in range(GATES)),
             "", "", "class Net(nn.Module):", "    def __init__(self):", "        super().__init__()",
             *(f"        self.gate{k} = Gate{k}()" for k in range(GATES)), "",
             "    def forward(self, x):", "        y = x",
             *(f"        g{k} = self.gate{k}(x)\n        g{k} += 1\n        y = y + g{k}" for k in range(GATES)),
             "        return y", "", "", "Net()(torch.randn(2, 4)).sum().backward()", ""]
    main = root / "main.py"
    main.write_text("\n".join(lines))
    return main


class Server:
    """`gradguard lsp` over pipes; answers the server's requests with null and keeps every
    message in the order it arrived."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "gradguard", "lsp"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.messages: queue.Queue[dict] = queue.Queue()
        self.log: list[dict] = []
        self.writing = threading.Lock()  # the reader thread answers requests meanwhile
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while (message := read_message(self.process.stdout)) is not None:
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            self.messages.put(message)

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        with self.writing:
            self.process.stdin.write(framed(body))
            self.process.stdin.flush()

    def index(self, accepts: Callable[[dict], bool], start: int = 0) -> int:
        """The place in the log of the first message from `start` on that `accepts` (waiting for it)."""
        while True:
            for index in range(start, len(self.log)):
                if accepts(self.log[index]):
                    return index
            start = len(self.log)
            try:
                self.log.append(self.messages.get(timeout=WAIT))
            except queue.Empty:
                raise AssertionError(f"the server sent nothing for {WAIT:.0f} s") from None

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def fresh_analysis(path: Path) -> set[tuple[str, int, int]]:
    """(code, 0-based line, column) of what a fresh analysis, which reads every import, finds in
    the file (a project index as the server's: without jedi)."""
    findings = OpenDocument(str(path)).analyse(path.read_text(), Settings(), project_index(use_jedi=False))
    return {(f.code, f.span.start.line - 1, f.span.start.column) for f in findings}


def found(diagnostics: list[dict]) -> set[tuple[str, int, int]]:
    return {(d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"]) for d in diagnostics}


@pytest.mark.parametrize("pull", [False, True], ids=["push", "pull"])
def test_a_change_while_imports_are_read_is_answered_before_they_all_are(tmp_path: Path, pull: bool):
    main = make_project(tmp_path)
    uri, final = main.as_uri(), main.read_text()
    server = Server()
    capabilities: dict = {
        "window": {"workDoneProgress": True},
        "textDocument": {"publishDiagnostics": {"versionSupport": True}},
        "workspace": {"diagnostics": {"refreshSupport": True}},
    }
    if pull:
        capabilities["textDocument"]["diagnostic"] = {}

    def ask(id: int) -> None:
        """Ask for the diagnostics (pull); pushed ones come by themselves."""
        if pull:
            server.send({"jsonrpc": "2.0", "id": id, "method": "textDocument/diagnostic",
                         "params": {"textDocument": {"uri": uri}}})

    def answer(version: int, id: int) -> Callable[[dict], bool]:
        """Whether a message brings the diagnostics of `version` (asked for with `id` when pulling)."""
        if pull:
            return lambda message: message.get("id") == id and "result" in message
        return lambda message: (message.get("method") == "textDocument/publishDiagnostics"
                                and message["params"].get("version") == version)

    def diagnostics(index: int) -> list[dict]:
        message = server.log[index]
        return message["result"]["items"] if pull else message["params"]["diagnostics"]

    def progress(kind: str) -> Callable[[dict], bool]:
        return lambda message: message.get("method") == "$/progress" and message["params"]["value"]["kind"] == kind

    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "capabilities": capabilities, "initializationOptions": {}}})
        server.index(lambda message: message.get("id") == 1)
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": "# a draft\n" + final}}})
        ask(2)
        first = diagnostics(server.index(answer(1, id=2)))
        assert first == [], "the first diagnostics do not wait for the imported files"

        begin = server.index(progress("begin"))
        server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": final}]}})
        ask(3)
        changed = server.index(answer(2, id=3), start=begin)
        end = server.index(progress("end"), start=begin)
        assert changed < end, "the change waited until every imported file was read"

        if pull:
            server.index(lambda message: message.get("method") == "workspace/diagnostic/refresh", start=end)
            ask(4)
        settled = diagnostics(server.index(answer(2, id=4), start=end))
        expected = fresh_analysis(main)
        assert {code for code, _, _ in expected} == {"GG001"} and len(expected) == GATES
        assert found(settled) == expected
    finally:
        server.stop()


def test_the_progress_of_reading_imports_ends_when_the_document_closes_and_begins_again_when_it_opens(tmp_path: Path):
    """Closed while its imports are read, a document's progress ends; opened again, they are
    read under a progress again (pygls kept the token, and refused it a second time)."""
    main = make_project(tmp_path)
    uri, token = main.as_uri(), f"gradguard-imports-{main.as_uri()}"
    server = Server()

    def progress(kind: str) -> Callable[[dict], bool]:
        return lambda message: (message.get("method") == "$/progress" and message["params"]["token"] == token
                                and message["params"]["value"]["kind"] == kind)

    def opened(version: int) -> None:
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": main.read_text()}}})

    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "capabilities": {"window": {"workDoneProgress": True}}, "initializationOptions": {}}})
        server.index(lambda message: message.get("id") == 1)
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        opened(1)
        begin = server.index(progress("begin"))
        server.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
        closed = server.index(lambda message: message.get("method") == "textDocument/publishDiagnostics"
                              and message["params"].get("version") is None, start=begin)
        end = server.index(progress("end"), start=begin)
        opened(2)
        again = server.index(progress("begin"), start=max(closed, end))
        server.index(progress("end"), start=again)
    finally:
        server.stop()


def slow_document(fills: int = 60) -> str:
    """A small file whose analysis spends its whole budget: calls that fan out through the
    branches of loops, from many functions (a second or more of CPU time)."""
    code = ["import torch", ""]
    for i in range(6):
        then = f"convert_{i + 1}(x, spec)" if i < 5 else "x"
        code += ["", f"def convert_{i}(x, spec):", "    for k in spec:", f"        if k == 1:\n            x = {then} * 2",
                 f"        elif k == 2:\n            x = {then} + 1", f"        else:\n            x = torch.tanh({then})",
                 "    return x", ""]
    for f in range(fills):
        code += ["", f"def fill_{f}(x, groups):", "    x = torch.tanh(x)",  # a tensor: no call is memoised
                 *(f"    for spec in groups[{g}]:\n        x = convert_0(x, spec)" for g in range(5)), "    return x"]
    return "\n".join(code) + "\n"


FAST = "import torch\n\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\ny.add_(1)\ny.sum().backward()\n"


def started_server() -> Server:
    server = Server()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
        "initializationOptions": {}}})
    server.index(lambda message: message.get("id") == 1)
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return server


def published(uri: str, version: int) -> Callable[[dict], bool]:
    return lambda message: (message.get("method") == "textDocument/publishDiagnostics"
                            and message["params"]["uri"] == uri and message["params"].get("version") == version)


def open_document(server: Server, path: Path, text: str) -> None:
    server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}}})


def test_a_slow_document_does_not_delay_the_diagnostics_of_another(tmp_path: Path):
    slow, fast = tmp_path / "slow.py", tmp_path / "fast.py"
    start = time.process_time()
    OpenDocument(str(slow)).analyse(slow_document(), Settings(), project_index(use_jedi=False))
    assert time.process_time() - start > 1.0, "the slow document is slow"
    server = started_server()
    try:
        open_document(server, fast, FAST)
        server.index(published(fast.as_uri(), 1))
        open_document(server, slow, slow_document())
        time.sleep(0.3)  # its analysis is under way
        for version in (2, 3):
            changed = time.perf_counter()
            server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": fast.as_uri(), "version": version},
                "contentChanges": [{"text": FAST.replace("add_(1)", f"add_({version})")}]}})
            index = server.index(published(fast.as_uri(), version))
            assert time.perf_counter() - changed < 1.0
            assert [d["code"] for d in server.log[index]["params"]["diagnostics"]] == ["GG001"]
        slow_published = server.index(published(slow.as_uri(), 1))  # stopped for the other, then run again
        notes = server.log[slow_published]["params"]["diagnostics"]
        assert notes and {(d["code"], d["severity"]) for d in notes} == {("GG000", 3)}  # information only
    finally:
        server.stop()


def test_a_client_that_goes_away_during_a_slow_analysis_ends_the_server(tmp_path: Path):
    server = started_server()
    try:
        open_document(server, tmp_path / "slow.py", slow_document(fills=200))
        time.sleep(0.5)
        gone = time.perf_counter()
        server.process.stdin.close()
        server.process.wait(timeout=10)
        assert time.perf_counter() - gone < 2.0
    finally:
        server.stop()


def test_an_analysis_no_longer_wanted_stops_within_100_ms(tmp_path: Path):
    """A newer version (or a close, a shutdown) stops the running analysis at its next step;
    the next version is then analysed as if the stopped one never came."""
    path = tmp_path / "slow.py"
    project = project_index(use_jedi=False)
    opened = OpenDocument(str(path))
    text = slow_document()
    opened.analyse(text.replace("def fill_1(", "def fill_first("), Settings(), project)
    wanted = threading.Event()
    wanted.set()
    unwanted_at: list[float] = []

    def unwanted() -> None:
        unwanted_at.append(time.perf_counter())
        wanted.clear()

    answered_at: list[float] = []

    def cancelled() -> bool:  # asked by the analysis at its steps
        if not wanted.is_set():
            answered_at.append(time.perf_counter())
        return not wanted.is_set()

    threading.Timer(0.3, unwanted).start()
    stopped = text + FAST.replace("import torch\n", "")
    with pytest.raises(Cancelled):
        opened.analyse(stopped, Settings(), project, cancelled)
    assert unwanted_at and answered_at == answered_at[:1] and answered_at[0] - unwanted_at[0] < 0.1
    assert time.perf_counter() - unwanted_at[0] < 0.5  # the garbage collector may run once it has stopped
    later = stopped.replace("add_(1)", "add_(2)")
    for version in (stopped, later):  # the stopped version itself again (its tree is known), then a newer one
        findings = opened.analyse(version, Settings(), project)
        fresh = OpenDocument(str(path)).analyse(version, Settings(), project_index(use_jedi=False))
        # where the budget's CPU time cuts may differ (the GG000 notes); the findings may not
        assert [(f.code, f.span.start.line) for f in findings if f.code != "GG000"] == \
            [(f.code, f.span.start.line) for f in fresh if f.code != "GG000"] == [("GG001", len(later.splitlines()) - 1)]


def test_the_garbage_collector_waits_while_the_user_types() -> None:
    """A change turns automatic collection off (a collection landing on a keystroke costs
    milliseconds); once typing pauses for `IDLE`, the young generations are collected and
    automatic collection resumes with its thresholds; a change during the pause waits again."""
    thresholds = gc.get_threshold()

    async def typing() -> list[tuple[int, int, int]]:
        scheduler = Scheduler()
        seen = []
        for _ in range(3):  # keystrokes closer together than IDLE
            scheduler.active()
            seen.append(gc.get_threshold())
            await asyncio.sleep(IDLE / 3)
        for _ in range(100):  # the pause: a background turn after IDLE of quiet (later on a busy machine)
            await asyncio.sleep(IDLE)
            if gc.get_threshold()[0]:
                break
        seen.append(gc.get_threshold())
        return seen

    try:
        seen = asyncio.run(typing())
    finally:
        gc.set_threshold(*thresholds)
    assert [s[0] for s in seen[:3]] == [0, 0, 0]
    assert seen[3] == thresholds


@pytest.mark.parametrize("line, found", [("# " + "1" * 5_000_000, [("GG000", 0)]),  # over the size limit
                                         ("D = [" + ", ".join(["0.125"] * 700_000) + "]", [("GG001", 6)])],
                         ids=["comment of digits", "list of floats"])
def test_a_hover_is_answered_while_a_file_with_a_5_mb_line_is_analysed(tmp_path: Path, line: str,
                                                                        found: list[tuple[str, int]]):
    """A long line once held the analysis thread, and with it the whole server, for minutes; a
    hover waits for no analysis of another document (it stops, and runs again after)."""
    fast, long = tmp_path / "fast.py", tmp_path / "long.py"
    server = started_server()
    try:
        open_document(server, fast, FAST)
        server.index(published(fast.as_uri(), 1))
        open_document(server, long, "import torch\n" + line + "\n" + FAST)
        time.sleep(0.1)  # read (5 MB of JSON): its analysis is under way
        waits = []
        for number in range(100, 120):
            asked = time.perf_counter()
            server.send({"jsonrpc": "2.0", "id": number, "method": "textDocument/hover", "params": {
                "textDocument": {"uri": fast.as_uri()}, "position": {"line": 3, "character": 0}}})
            answer = server.log[server.index(lambda message, number=number: message.get("id") == number)]
            waits.append(time.perf_counter() - asked)
            assert "y" in json.dumps(answer["result"])
            time.sleep(0.05)
        assert max(waits) < 0.2, waits
        diagnostics = server.log[server.index(published(long.as_uri(), 1))]["params"]["diagnostics"]
        assert [(d["code"], d["range"]["start"]["line"]) for d in diagnostics] == found
    finally:
        server.stop()
