"""Robustness fuzz of `gradguard lsp`: thousands of random edits and requests over stdio.

A small raw JSON-RPC client drives the server through subprocess pipes (pytest-lsp would
validate what we send, and the point is to send what a buggy editor sends). Seeded and
reproducible: `GRADGUARD_FUZZ_SEED` picks another seed, `GRADGUARD_FUZZ_EDITS` the number of
edits. Edits go out in bursts without waiting (the server coalesces: the latest version wins);
after each burst the test waits for the diagnostics of the burst's final version.

Asserted: the process stays alive, nothing hangs, every request gets a response (a result or
an error), diagnostics come for each burst's final version (published, or pulled), and the
diagnostics after incremental edits equal those of a fresh open of the same text (and, for a
few final texts, those of `gradguard check --format json`).

Two kinds of edits: exact ones, valid LSP, which the test applies to its own copy of the text
as the LSP specification says (lines end at \\n, \\r\\n or \\r; columns in the negotiated
encoding's code units), and chaotic ones (positions past the end, reversed ranges, a column
inside a surrogate pair or a \\r\\n, edits to unknown documents, malformed params), whose
effect the specification leaves open; a chaotic burst ends with a framing mistake (a wrong
Content-Length, or none: `mis_framed`) and a full-text change, so the test knows the server's
text again and the server must have found its way back to the messages.
"""

from __future__ import annotations

import bisect
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import MODELS, ROOT, made_by
from lsp_wire import framed, read_message

SEED = int(os.environ.get("GRADGUARD_FUZZ_SEED", "20261130"))
EDITS = int(os.environ.get("GRADGUARD_FUZZ_EDITS", "10000"))
WAIT = 60.0  # seconds a burst's diagnostics or a request's answer may take on a loaded machine
SERVER = [sys.executable, "-m", "gradguard", "lsp"]
NOWHERE = "file:///gradguard-fuzz-nowhere"  # a directory that does not exist

# What a user types, pastes or a broken tool produces. Exact edits may insert any of these.
SNIPPETS = [
    "x", "out", "self", " ", "    ", "\t", "\n", "\n        ", "\r\n", "(", ")", "[", "]", ":", ",", ".", "=",
    "'", '"', '"""', "#", "\\", "out += x", "x.add_(1)", "y.mul_(2)", ".relu_()", "inplace=True",
    "out = self.relu(out)\n        out += identity\n", "def forward(self, x):\n", "class M(nn.Module):\n",
    "return", "lambda", "if x:\n", "async ", "日本語", "变量 = 1", "😀", "🧪x = 2", "é", "\u200b", "\ufeff",
    "\x00", "\x01\x02\x1b[0m\x7f", "\ud800", "\udfff", "x = '\ud83d'", "\r", "\t\t# 日本 😀\r\n",
]
# Line breaks for Python's str.splitlines() but not for LSP: only chaotic edits insert these.
NOT_LSP_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LSP_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Server:
    """`gradguard lsp` over pipes: requests, notifications, raw bodies; a thread reads replies."""

    def __init__(self, log_path: Path) -> None:
        self.stderr = open(log_path, "wb")
        self.process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                        cwd=ROOT)
        self.changed = threading.Condition()
        self.responses: dict[object, dict] = {}
        self.published: dict[str, tuple[int | None, list]] = {}
        self.next_id = 0
        self.pending: dict[object, str] = {}  # id -> method, until answered
        self.closed = False
        self.write_lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        try:
            while (message := read_message(stream)) is not None:
                if "method" in message and "id" in message:  # a request from the server
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                    continue
                with self.changed:
                    if "id" in message:
                        self.responses[message["id"]] = message
                        self.pending.pop(message["id"], None)
                    elif message.get("method") == "textDocument/publishDiagnostics":
                        params = message["params"]
                        self.published[params["uri"]] = (params.get("version"), params["diagnostics"])
                    self.changed.notify_all()
        finally:
            with self.changed:
                self.closed = True
                self.changed.notify_all()

    def send_body(self, body: bytes) -> None:
        self.send_raw(framed(body))

    def send_raw(self, data: bytes) -> None:
        with self.write_lock:
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def send(self, message: dict, ascii: bool = True) -> None:
        """`ascii` sends non-ASCII text as \\u escapes (lone surrogates always are)."""
        try:
            body = json.dumps(message, ensure_ascii=ascii).encode("utf-8")
        except UnicodeEncodeError:
            body = json.dumps(message).encode("utf-8")
        self.send_body(body)

    def request(self, method: str, params: object, id: object = None) -> object:
        if id is None:
            self.next_id += 1
            id = self.next_id
        with self.changed:
            self.pending[id] = method
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        return id

    def notify(self, method: str, params: object, ascii: bool = True) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params}, ascii)

    def wait_for(self, condition, what: str, timeout: float = WAIT) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not condition():
                left = deadline - time.monotonic()
                assert not self.closed and self.process.poll() is None, f"the server died waiting for {what}"
                assert left > 0, f"no answer in {timeout:.0f} s: {what}"
                self.changed.wait(min(left, 1.0))

    def answer(self, id: object) -> dict:
        self.wait_for(lambda: id in self.responses, f"the response to request {id!r}")
        return self.responses.pop(id)

    def call(self, method: str, params: object) -> dict:
        return self.answer(self.request(method, params))

    def all_answered(self) -> None:
        self.wait_for(lambda: not self.pending, f"responses to {dict(list(self.pending.items())[:5])}")
        self.responses.clear()

    def alive(self) -> None:
        assert self.process.poll() is None, f"the server exited with {self.process.returncode}"

    def stop(self) -> None:
        """shutdown, exit: the process must end by itself."""
        try:
            if self.process.poll() is None:
                response = self.call("shutdown", None)
                assert "result" in response, response
                self.notify("exit", None)
                assert self.process.wait(timeout=15) == 0
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.stderr.close()


def mis_framed(rng: random.Random) -> bytes:
    """A notification no handler takes, framed wrongly (test_lsp_framing.py has each case exactly):
    its Content-Length too short, too long, counted in characters, or no number of bytes up to
    64 MiB; or no header at all. What comes after it must still be served."""
    body = json.dumps({"jsonrpc": "2.0", "method": "$/gradguard-fuzz", "params": {"text": rng.choice(SNIPPETS)}},
                      ensure_ascii=False).encode("utf-8", "surrogatepass")
    if rng.random() < 0.1:
        return b"no header " + body
    length = rng.choice([len(body) - rng.randint(1, len(body) - 1), len(body) + rng.randint(1, 300),
                         len(body.decode("utf-8", "surrogatepass")), 10**12, -1, "ten"])
    return b"Content-Length: %s\r\n\r\n" % str(length).encode() + body


class Text:
    """The client's copy of a document, and LSP positions in its encoding."""

    def __init__(self, uri: str, text: str, encoding: str) -> None:
        self.uri, self.text, self.version, self.encoding = uri, text, 1, encoding
        self._starts: list[int] | None = None

    def units(self, chars: str) -> int:
        if self.encoding == "utf-8":
            return len(chars.encode("utf-8", "surrogatepass"))
        return sum(2 if ord(c) > 0xFFFF else 1 for c in chars)

    def starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [0] + [m.end() for m in LSP_LINE_BREAK.finditer(self.text)]
        return self._starts

    def valid_offset(self, offset: int) -> int:
        """`offset`, moved off the middle of a \\r\\n."""
        if 0 < offset < len(self.text) and self.text[offset - 1] == "\r" and self.text[offset] == "\n":
            return offset - 1
        return offset

    def position(self, offset: int) -> dict:
        starts = self.starts()
        line = bisect.bisect_right(starts, offset) - 1
        return {"line": line, "character": self.units(self.text[starts[line]:offset])}

    def range(self, start: int, end: int) -> dict:
        return {"start": self.position(start), "end": self.position(end)}

    def replace(self, start: int, end: int, new: str) -> dict:
        """Apply an edit here; returns it as an LSP content change."""
        change = {"range": self.range(start, end), "text": new}
        self.text = self.text[:start] + new + self.text[end:]
        self._starts = None
        return change

    def set(self, text: str) -> dict:
        self.text, self._starts = text, None
        return {"text": text}


def model_files() -> list[Path]:
    made_by("make models", MODELS / "timm", MODELS / "torchvision")
    files = sorted(p for lib in ("timm", "torchvision") for p in (MODELS / lib).rglob("*.py")
                   if 200 < p.stat().st_size < 60_000)
    return files + sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests" / "cases").glob("*.py"))


class Fuzzer:
    """One server session: bursts of edits and requests over a few open documents."""

    def __init__(self, server: Server, rng: random.Random, encoding: str, pull: bool) -> None:
        self.server, self.rng, self.encoding, self.pull = server, rng, encoding, pull
        self.files = model_files()
        self.texts: dict[str, str] = {}
        self.open: dict[str, Text] = {}
        self.closed_uris: list[str] = []
        self.edits = 0
        self.serial = 0
        self.agreements = 0
        self.disagreements: list[tuple[str, int, str, list, list]] = []
        self.bursts = 0
        self.finals: list[tuple[str, list]] = []  # (text, diagnostics) for the CLI comparison
        self.framing = random.Random(SEED + 2)  # its own: the edits stay those of the seed without framing mistakes

    # --- material -----------------------------------------------------------------------------
    def source(self, path: Path) -> str:
        if path not in self.texts:
            self.texts[path] = path.read_text(encoding="utf-8")
        return self.texts[path]

    def excerpt(self, max_lines: int) -> str:
        lines = self.source(self.rng.choice(self.files)).splitlines(keepends=True)
        start = 0 if self.rng.random() < 0.5 else self.rng.randrange(len(lines))
        return "".join(lines[start:start + self.rng.randint(1, max_lines)])

    def new_text(self) -> str:
        """A truncated real file, sometimes with a splice of another, CRLF line ends or tabs."""
        text = self.excerpt(220)
        if self.rng.random() < 0.4:
            lines = text.splitlines(keepends=True)
            at = self.rng.randrange(len(lines) + 1)
            text = "".join(lines[:at]) + self.excerpt(40) + "".join(lines[at:])
        if self.rng.random() < 0.15:
            text = text.replace("\n", "\r\n")
        if self.rng.random() < 0.1:
            text = text.replace("    ", "\t")
        if self.rng.random() < 0.1:
            text = "# 日本語のコメント 😀 🧪\n" + text
        return text

    def uri(self, stem: str = "doc") -> str:
        self.serial += 1
        return f"{NOWHERE}/{stem}_{self.serial}.py"

    # --- documents ----------------------------------------------------------------------------
    def open_document(self, text: str | None = None, uri: str | None = None) -> Text:
        document = Text(uri or self.uri(), self.new_text() if text is None else text, self.encoding)
        self.server.notify("textDocument/didOpen", {"textDocument": {
            "uri": document.uri, "languageId": "python", "version": 1, "text": document.text}},
            ascii=self.rng.random() < 0.5)
        self.open[document.uri] = document
        return document

    def close_document(self, document: Text) -> None:
        self.server.notify("textDocument/didClose", {"textDocument": {"uri": document.uri}})
        del self.open[document.uri]
        self.closed_uris.append(document.uri)

    def change(self, document: Text, changes: list[dict]) -> None:
        document.version += 1
        self.server.notify("textDocument/didChange", {
            "textDocument": {"uri": document.uri, "version": document.version}, "contentChanges": changes},
            ascii=self.rng.random() < 0.5)
        self.edits += 1

    # --- edits --------------------------------------------------------------------------------
    def exact_change(self, document: Text) -> dict:
        rng, size = self.rng, len(document.text)
        start = document.valid_offset(rng.randint(0, size))
        kind = rng.random()
        if kind < 0.55:  # typing
            return document.replace(start, start, rng.choice(SNIPPETS))
        if kind < 0.75:  # deleting
            end = document.valid_offset(min(size, start + rng.choice([1, 1, 2, 5, 20, 200])))
            return document.replace(start, end, "")
        if kind < 0.9:  # pasting a piece of another file over a selection
            end = document.valid_offset(min(size, start + rng.randint(0, 300)))
            return document.replace(start, end, self.excerpt(15))
        if kind < 0.95:  # truncating
            return document.replace(start, size, "")
        return document.set(self.new_text())  # the whole text at once (no range)

    def chaotic_change(self, document: Text) -> dict:
        rng = self.rng
        lines = len(document.starts())
        position = rng.choice([
            {"line": rng.randint(lines, lines + 5), "character": 0},
            {"line": rng.randrange(lines), "character": rng.choice([10_000, 2**31 - 1])},
            {"line": 10**6, "character": 10**6},
            {"line": 0, "character": 0},
        ])
        if rng.random() < 0.3 and "😀" in document.text:  # a column inside a surrogate pair
            offset = document.text.index("😀")
            inside = document.position(offset)
            position = {"line": inside["line"], "character": inside["character"] + 1}
        if rng.random() < 0.3 and "\r\n" in document.text:  # a column between \r and \n
            offset = document.text.index("\r\n") + 1
            position = {"line": document.position(offset)["line"], "character":
                        document.units(document.text[document.starts()[document.position(offset)["line"]]:offset])}
        other = document.position(rng.randint(0, len(document.text)))
        start, end = (position, other) if rng.random() < 0.5 else (other, position)  # reversed ranges too
        text = rng.choice(SNIPPETS + list(NOT_LSP_BREAKS) + ["a\x0cb", "\u2028x = 1\u2029"])
        return {"range": {"start": start, "end": end}, "text": text,
                **({"rangeLength": rng.randint(-5, 10**6)} if rng.random() < 0.2 else {})}

    def chaos(self, document: Text) -> None:
        """Edits whose effect is left open, malformed ones, edits to unknown documents."""
        rng, server = self.rng, self.server
        choice = rng.random()
        if choice < 0.6:
            self.change(document, [self.chaotic_change(document) for _ in range(rng.randint(1, 3))])
        elif choice < 0.7:  # an edit for a document that is not open
            uri = rng.choice(self.closed_uris or [self.uri("never")])
            server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 99},
                                                     "contentChanges": [{"text": "x = 1\n"}]})
            self.edits += 1
        elif choice < 0.8:  # malformed params
            server.notify("textDocument/didChange", rng.choice([
                {"textDocument": {"uri": document.uri}},
                {"textDocument": {"uri": document.uri, "version": "two"}, "contentChanges": [{"text": 5}]},
                {"textDocument": {"uri": document.uri, "version": document.version + 1},
                 "contentChanges": [{"range": {"start": {"line": -1, "character": 0},
                                               "end": {"line": 0, "character": "x"}}, "text": "y"}]},
                [1, 2, 3], None, "didChange",
            ]))
            self.edits += 1
        elif choice < 0.9:  # a version that goes backwards, or no version at all
            document.version += 1
            server.notify("textDocument/didChange", {
                "textDocument": {"uri": document.uri, "version": rng.choice([0, 1, None])},
                "contentChanges": [self.chaotic_change(document)]})
            self.edits += 1
        else:  # raw bodies that are not JSON-RPC requests
            server.send_body(rng.choice([b"{", b"[]", b"null", b'"x"', b"{}", b'{"jsonrpc": "2.0"}',
                                         b'{"jsonrpc": "2.0", "method": 5}', b'{"jsonrpc": "2.0", "id": 3.5}',
                                         b"\xff\xfe\x00", "{\"text\": \"\\ud800\"".encode()]))

    def resync(self, document: Text) -> None:
        """A framing mistake, then a full-text change: after chaos, the server's text is known again
        (and the server has found the messages after the mistake)."""
        self.server.send_raw(mis_framed(self.framing))
        text = document.text.translate({ord(c): None for c in NOT_LSP_BREAKS})
        self.change(document, [document.set(text)])

    # --- requests -----------------------------------------------------------------------------
    def some_position(self, document: Text | None) -> dict:
        if document is None or self.rng.random() < 0.2:
            return {"line": self.rng.choice([0, 5, 10**6]), "character": self.rng.choice([0, 3, 2**31 - 1])}
        return document.position(document.valid_offset(self.rng.randint(0, len(document.text))))

    def random_request(self, document: Text) -> None:
        rng, server = self.rng, self.server
        uri = document.uri if rng.random() < 0.7 else rng.choice(self.closed_uris + [self.uri("unknown"),
                                                                                       "untitled:Untitled-1", "x"])
        target = document if uri == document.uri else None
        start, end = self.some_position(target), self.some_position(target)
        choice = rng.random()
        if choice < 0.3:
            server.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": start})
        elif choice < 0.55:
            diagnostics = [{"range": {"start": start, "end": end}, "message": "m", "code": "GG001",
                            "data": rng.choice([{"index": rng.choice([-1, 0, 1, 10**9, "0", None])}, None, [], "x"])}
                           for _ in range(rng.randint(0, 2))]
            only = rng.choice([None, ["quickfix"], ["source"], ["source.fixAll.gradguard"], ["refactor"], []])
            if only == ["source.fixAll.gradguard"] and len(document.text) > 8_000:
                only = ["quickfix"]  # fix-all re-analyses up to five times: keep it to small files
            server.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": start, "end": end},
                                                       "context": {"diagnostics": diagnostics,
                                                                   **({"only": only} if only is not None else {})}})
        elif choice < 0.7:
            server.request("textDocument/diagnostic", {"textDocument": {"uri": uri},
                                                       **({"previousResultId": "1:2"} if rng.random() < 0.3 else {})})
        elif choice < 0.8:  # methods the server does not offer
            server.request(rng.choice(["textDocument/documentSymbol", "textDocument/completion", "gradguard/nothing",
                                       "workspace/symbol"]),
                           {"textDocument": {"uri": uri}, "position": start, "query": ""})
        elif choice < 0.95:  # params that are not LSP
            server.request(rng.choice(["textDocument/hover", "textDocument/codeAction", "textDocument/diagnostic"]),
                           rng.choice([None, [], {}, "x", {"textDocument": {"uri": 3}, "position": "nowhere"},
                                       {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}},
                                       {"textDocument": {"uri": uri}, "range": {"start": start}, "context": {}}]),
                           id=rng.choice([None, f"s{self.serial}-{rng.random()}"]))
        else:
            server.notify("$/cancelRequest", {"id": rng.randint(1, server.next_id + 1)})

    # --- bursts -------------------------------------------------------------------------------
    def burst(self, document: Text, size: int, chaotic: bool) -> None:
        rng = self.rng
        for _ in range(size):
            if chaotic and rng.random() < 0.25:
                self.chaos(document)
            else:
                self.change(document, [self.exact_change(document) for _ in range(rng.choice([1, 1, 1, 2, 3]))])
            if rng.random() < 0.05:
                self.random_request(document)
        if chaotic:
            self.resync(document)
        self.settled(document)

    def diagnostics(self, document: Text, timeout: float = WAIT) -> list:
        """The diagnostics of the document's current version: published, or pulled."""
        if self.pull:
            response = self.server.call("textDocument/diagnostic", {"textDocument": {"uri": document.uri}})
            assert response.get("result", {}).get("kind") == "full", response
            items = response["result"]["items"]
            assert all(d["data"]["version"] == document.version for d in items), (document.version, items[:1])
            return items
        version = document.version
        self.server.wait_for(lambda: self.server.published.get(document.uri, (None,))[0] == version,
                             f"diagnostics for version {version} of {document.uri}", timeout)
        return self.server.published[document.uri][1]

    def settled(self, document: Text, timeout: float = WAIT) -> list:
        diagnostics = self.diagnostics(document, timeout)
        self.server.all_answered()
        self.server.alive()
        return diagnostics

    def agree(self, document: Text) -> None:
        """The incrementally edited document's diagnostics equal a fresh open of the same text."""
        ours = self.diagnostics(document)
        fresh = self.open_document(document.text, uri=self.uri("fresh"))
        theirs = self.diagnostics(fresh)
        self.close_document(fresh)
        self.agreements += 1
        if any(d.get("code") == "GG000" for d in theirs):
            # Text that does not parse: a fresh open can only say so; the edited document says so
            # at the same place and keeps the findings of the blocks that still parse.
            ours, theirs = syntax_errors(ours), syntax_errors(theirs)
        if comparable(ours) != comparable(theirs):  # noted, so that the fuzz goes on to its end
            self.disagreements.append((document.uri, document.version, document.text, ours, theirs))

    def run(self, edits: int) -> None:
        rng = self.rng
        while self.edits < edits:
            while len(self.open) < 3:
                self.open_document()
            document = rng.choice(list(self.open.values()))
            self.burst(document, rng.randint(5, 90), chaotic=rng.random() < 0.3)
            self.bursts += 1
            if self.bursts % 4 == 0:
                self.agree(document)
            if rng.random() < 0.15:
                if len(self.finals) < 8:
                    self.finals.append((document.text, self.diagnostics(document)))
                self.close_document(document)
                self.random_request(document)  # a request for the document just closed
        self.server.all_answered()
        self.server.alive()


def assert_agreement(fuzz: Fuzzer, folder: Path) -> None:
    """Every incremental result equalled a fresh open; otherwise the texts are kept in `folder`."""
    if not fuzz.disagreements:
        return
    lines = []
    for index, (uri, version, text, ours, theirs) in enumerate(fuzz.disagreements):
        path = folder / f"disagreement_{index}.py"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        if index < 3:
            only_ours = sorted(set(comparable(ours)) - set(comparable(theirs)))
            only_fresh = sorted(set(comparable(theirs)) - set(comparable(ours)))
            lines.append(f"{uri} v{version} (text in {path}):\n  incremental only: {only_ours[:3]}"
                         f"\n  fresh open only:  {only_fresh[:3]}")
    beyond_messages = sum(1 for *_, ours, theirs in fuzz.disagreements
                          if [c[:3] for c in comparable(ours)] != [c[:3] for c in comparable(theirs)])
    raise AssertionError(f"{len(fuzz.disagreements)} of {fuzz.agreements} comparisons: the diagnostics after "
                         "incremental edits differ from those of a fresh open of the same text "
                         f"({beyond_messages} in ranges, codes or severities, the others only in messages)\n"
                         + "\n".join(lines))


def syntax_errors(diagnostics: list) -> list:
    """The GG000 diagnostics, without their messages (which say how much of the file is skipped)."""
    return [{**d, "message": ""} for d in diagnostics if d.get("code") == "GG000"]


def comparable(diagnostics: list) -> list:
    return sorted((json.dumps(d["range"], sort_keys=True), d.get("code"), d.get("severity"), d["message"])
                  for d in diagnostics)


def start(tmp_path: Path, name: str, capabilities: dict) -> Server:
    server = Server(tmp_path / f"{name}.stderr")
    response = server.call("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": capabilities})
    assert "result" in response, response
    server.notify("initialized", {})
    return server


def test_push_client_utf16(tmp_path):
    """A Neovim-like client: pushed diagnostics, UTF-16 columns; most of the edits, the 5 MB file,
    and a comparison with `gradguard check` for a few final texts."""
    rng = random.Random(SEED)
    server = start(tmp_path, "push", {"general": {"positionEncodings": ["utf-16"]},
                                      "textDocument": {"publishDiagnostics": {"relatedInformation": True}}})
    try:
        fuzz = Fuzzer(server, rng, "utf-16", pull=False)
        huge_file(fuzz)
        fuzz.run(EDITS * 7 // 10)
        assert fuzz.agreements >= 5
        compare_with_cli(fuzz.finals, tmp_path)
        assert_agreement(fuzz, tmp_path)
    finally:
        server.stop()


def test_pull_client_utf8(tmp_path):
    """A VS Code-like client that pulls diagnostics, with UTF-8 columns: the other edits."""
    rng = random.Random(SEED + 1)
    server = start(tmp_path, "pull", {"general": {"positionEncodings": ["utf-8", "utf-16"]},
                                      "textDocument": {"diagnostic": {"relatedDocumentSupport": True}}})
    try:
        fuzz = Fuzzer(server, rng, "utf-8", pull=True)
        fuzz.run(EDITS - EDITS * 7 // 10)
        assert fuzz.agreements >= 3
        assert_agreement(fuzz, tmp_path)
    finally:
        server.stop()


def huge_file(fuzz: Fuzzer) -> None:
    """A 5 MB document (real code, CJK and emoji lines): edited, hovered, then cut down to size."""
    parts, size = [], 0
    for path in fuzz.files:
        chunk = fuzz.source(path) + "\n# 日本語 😀 🧪\n"
        parts.append(chunk)
        size += len(chunk.encode("utf-8"))
        if size > 5_000_000:
            break
    document = fuzz.open_document("".join(parts))
    fuzz.settled(document)
    for _ in range(10):
        fuzz.change(document, [fuzz.exact_change(document) if fuzz.rng.random() < 0.8
                               else document.replace(len(document.text), len(document.text), "x = 1\n")])
    fuzz.server.request("textDocument/hover", {"textDocument": {"uri": document.uri},
                                               "position": document.position(len(document.text) // 2)})
    diagnostics = fuzz.settled(document)
    if len(document.text) > 2_000_000:
        assert [d["code"] for d in diagnostics] == ["GG000"]
    fuzz.change(document, [document.replace(document.valid_offset(20_000), len(document.text), "")])
    fuzz.settled(document)
    fuzz.close_document(document)


def compare_with_cli(finals: list[tuple[str, list]], tmp_path: Path) -> None:
    """`gradguard check --format json` on the final texts finds what the server published."""
    cases = [(text, diagnostics) for text, diagnostics in finals
             if "torch" in text  # the CLI skips files that never mention torch (cli/files.py)
             and not re.search(r"[\x00-\x08\x0e-\x1f\x7f\ud800-\udfff\ufeff]", text)]
    assert cases, "no final text to compare with `gradguard check`"
    folder = tmp_path / "cli"
    folder.mkdir()
    paths = []
    for index, (text, _) in enumerate(cases):
        paths.append(folder / f"final_{index}.py")
        paths[-1].write_bytes(text.encode("utf-8"))
    run = subprocess.run([sys.executable, "-m", "gradguard", "check", "--format", "json", "--no-config",
                          "--exit-zero", *map(str, paths)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    found = json.loads(run.stdout)
    for path, (text, diagnostics) in zip(paths, cases):
        model = Text("", text, "utf-16")
        starts = model.starts()

        def position(row: int, column: int) -> tuple[int, int]:  # 1-based code points -> LSP
            offset = min(starts[row - 1] + column - 1, len(text)) if row - 1 < len(starts) else len(text)
            return model.position(offset)["line"], model.position(offset)["character"]

        cli = sorted((position(f["location"]["row"], f["location"]["column"]), f["code"])
                     for f in found if f["filename"] == str(path))
        server = sorted(((d["range"]["start"]["line"], d["range"]["start"]["character"]), d["code"])
                        for d in diagnostics)
        assert server == cli, f"the server and `gradguard check` differ on {path}"


@pytest.mark.parametrize("separator", [" ", "é", "\x0c", "\x0b", "\x1c", "\x85", "\u2028"])
def test_an_edit_below_a_character_that_ends_no_lsp_line_lands_on_its_line(separator, tmp_path):
    text = (f"s = '{separator}'\nimport torch\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\n"
            "y.mul(2)\ny.sum().backward()\n")
    server = start(tmp_path, "separator", {})
    try:
        fuzz = Fuzzer(server, random.Random(SEED), "utf-16", pull=False)
        document = fuzz.open_document(text)
        fuzz.settled(document)
        offset = text.index("y.mul(") + len("y.mul")
        fuzz.change(document, [document.replace(offset, offset, "_")])  # y.mul(2) -> y.mul_(2): GG001
        assert [(d["code"], d["range"]["start"]["line"]) for d in fuzz.settled(document)] == [("GG001", 4)]
    finally:
        server.stop()


def test_percent_encoded_uris_get_diagnostics(tmp_path):
    server = start(tmp_path, "encoded", {})
    try:
        fuzz = Fuzzer(server, random.Random(SEED), "utf-16", pull=False)
        text = (ROOT / "examples" / "residual_block.py").read_text()
        plain = fuzz.open_document(text, uri=f"{NOWHERE}/plain/residual_block.py")
        encoded = [fuzz.open_document(text, uri=f"{NOWHERE}/{folder}/residual_block.py")
                   for folder in ("with%20space", "%E6%97%A5%E6%9C%AC", "c%3A", "a%5Bb%5D")]
        assert [d["code"] for d in fuzz.settled(plain)] == ["GG001"]
        try:  # the plain one is analysed: these have had time enough
            server.wait_for(lambda: all(d.uri in server.published for d in encoded), "diagnostics", timeout=5)
        except AssertionError:
            pass
        got = {d.uri: [x["code"] for x in server.published[d.uri][1]] if d.uri in server.published else None
               for d in encoded}
        assert got == {document.uri: ["GG001"] for document in encoded}
    finally:
        server.stop()
