"""The LSP base protocol as `gradguard lsp` reads it: framing mistakes cost at most the message
they frame, and the server answers as the specification says where a message cannot be served.

Raw pipes (and one TCP socket) to the real server: a wrong Content-Length, one too large to
allocate, a body that is not JSON, requests before `initialize` and after `shutdown`, and the exit
code of `exit`. Then `Framer` itself, fed the same mistakes one byte at a time.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

from gradguard.lsp.protocol import MAX_BODY, Framer
from helpers import ROOT
from lsp_wire import framed, read_message

SERVER = [sys.executable, "-m", "gradguard", "lsp"]
WAIT = 30.0  # seconds an answer may take on a loaded machine
INITIALIZE = {"processId": None, "rootUri": None, "capabilities": {}}
HOVER = {"textDocument": {"uri": "file:///nowhere/x.py"}, "position": {"line": 0, "character": 0}}
PARSE_ERROR, INVALID_REQUEST, NOT_INITIALIZED = -32700, -32600, -32002


def body(message: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


def request(id: int, method: str, params: object = None) -> bytes:
    return framed(body({"id": id, "method": method, "params": params}))


def notification(method: str, params: object = None) -> bytes:
    return framed(body({"method": method, "params": params}))


def with_length(length: bytes | int, content: bytes) -> bytes:
    return b"Content-Length: %s\r\n\r\n" % (str(length).encode() if isinstance(length, int) else length) + content


class Client:
    """The server's messages, read by a thread from `stream`, as they come."""

    def __init__(self, stream: IO[bytes], write: Callable[[bytes], object]) -> None:
        self.write = write
        self.messages: list[dict] = []
        self.closed = False
        self.changed = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        try:
            while (message := read_message(stream)) is not None:
                with self.changed:
                    self.messages.append(message)
                    self.changed.notify_all()
        except (OSError, ValueError):  # the test closed the stream under it
            pass
        finally:
            with self.changed:
                self.closed = True
                self.changed.notify_all()

    def replies(self, count: int) -> list[dict]:
        """The next `count` responses (server notifications such as window/logMessage set aside)."""
        deadline = time.monotonic() + WAIT
        with self.changed:
            while len(answers := [m for m in self.messages if "method" not in m]) < count:
                assert not self.closed, f"the server closed its output after {answers}"
                assert time.monotonic() < deadline, f"no answer in {WAIT:.0f} s; so far {self.messages}"
                self.changed.wait(0.5)
            for message in answers[:count]:
                self.messages.remove(message)
            return answers[:count]

    def initialize(self) -> None:
        self.write(request(1, "initialize", INITIALIZE) + notification("initialized", {}))
        assert "result" in self.replies(1)[0]


def _default_signals() -> None:
    """As from a terminal, even under `nohup`: gradguard leaves an ignored signal ignored."""
    for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_DFL)


class Server(Client):
    """`gradguard lsp` over pipes."""

    def __init__(self, tmp_path: Path) -> None:
        self.stderr = open(tmp_path / "server.stderr", "wb")
        self.process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                        cwd=ROOT, preexec_fn=_default_signals)
        super().__init__(self.process.stdout, self._write)

    def _write(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def exit_code(self) -> int:
        return self.process.wait(timeout=WAIT)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()


@pytest.fixture
def server(tmp_path):
    started = Server(tmp_path)
    yield started
    started.close()


def error(reply: dict) -> tuple[object, int]:
    assert "error" in reply, reply
    return reply["id"], reply["error"]["code"]


def test_a_body_that_is_not_json_gets_a_parse_error_and_the_next_request_an_answer(server):
    server.initialize()
    server.write(framed(b'{"jsonrpc": "2.0", "id": 2, "method": ') + request(3, "textDocument/hover", HOVER))
    refused, answered = server.replies(2)
    assert error(refused) == (None, PARSE_ERROR)
    assert answered == {"jsonrpc": "2.0", "id": 3, "result": None}


def test_a_content_length_too_short_costs_its_message_only(server):
    """pygls read the rest of the body as the next header: every later message was lost."""
    server.initialize()
    cut = body({"id": 2, "method": "textDocument/hover", "params": HOVER})
    server.write(with_length(len(cut) - 7, cut) + request(3, "textDocument/hover", HOVER)
                 + request(4, "textDocument/hover", HOVER))
    replies = server.replies(3)
    assert error(replies[0]) == (None, PARSE_ERROR)
    assert [r["id"] for r in replies[1:]] == [3, 4] and all("result" in r for r in replies[1:])


def test_a_content_length_counted_in_characters_not_bytes_costs_its_message_only(server):
    server.initialize()
    text = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///nowhere/x.py", "languageId": "python", "version": 1, "text": "日本語 = 1\n"}}},
        ensure_ascii=False).encode()
    server.write(with_length(len(text.decode()), text) + request(2, "textDocument/hover", HOVER))
    refused, answered = server.replies(2)
    assert error(refused) == (None, PARSE_ERROR)
    assert (answered["id"], answered["result"]) == (2, None)


def test_a_content_length_too_long_neither_waits_nor_swallows_the_next_message(server):
    """pygls waited for bytes that were not coming, then read the next message into this one."""
    server.initialize()
    first = body({"id": 2, "method": "textDocument/hover", "params": HOVER})
    server.write(with_length(len(first) + 500, first) + request(3, "textDocument/hover", HOVER))
    assert [(r["id"], r["result"]) for r in server.replies(2)] == [(2, None), (3, None)]


@pytest.mark.parametrize("length", [b"1000000000000", b"-5", b"ten", b"12abc", b""])
def test_a_content_length_that_is_no_usable_number_is_answered_never_allocated(server, length):
    """pygls allocated 10**12 bytes (MemoryError: the process died) and ignored the others."""
    server.initialize()
    server.write(with_length(length, b'{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}')
                 + request(3, "textDocument/hover", HOVER))
    refused, answered = server.replies(2)
    assert error(refused) == (None, PARSE_ERROR)
    assert str(MAX_BODY) in refused["error"]["message"]
    assert (answered["id"], answered["result"]) == (3, None)


@pytest.mark.parametrize("content, answered_id", [
    (b"[]", None),
    (b"42", None),
    (b"null", None),
    (b'"initialize"', None),
    (b"{}", None),
    (b'{"id": 99}', 99),  # no "jsonrpc"
    (b'{"jsonrpc": "1.0", "id": 7, "method": "textDocument/hover"}', 7),
    (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', 1),  # pygls answered -32603
    (b'{"jsonrpc": "2.0", "method": 5}', None),
    (b'{"jsonrpc": "2.0", "id": [2], "method": "textDocument/hover"}', None),
    (b'{"jsonrpc": "2.0", "id": 3.5, "method": "textDocument/hover"}', 3.5),
])
def test_json_that_is_no_json_rpc_message_gets_invalid_request_and_the_next_request_an_answer(
        server, content, answered_id):
    """JSON-RPC 2.0: an invalid request is answered -32600, with its id where it can be read and
    null where not; pygls answered none of these but the one it answered -32603."""
    server.initialize()
    server.write(framed(content) + request(3, "textDocument/hover", HOVER))
    refused, answered = server.replies(2)
    assert error(refused) == (answered_id, INVALID_REQUEST)
    assert answered == {"jsonrpc": "2.0", "id": 3, "result": None}


def test_a_batch_is_not_run_each_request_in_it_is_refused_and_its_notifications_dropped(server):
    """LSP has no batches: its requests get -32600 with their ids, what is no message -32600 with
    null, a notification nothing; the server goes on serving."""
    server.initialize()
    batch = [json.loads(body({"id": 4, "method": "textDocument/hover", "params": HOVER})),
             json.loads(body({"method": "initialized", "params": {}})), 42]
    server.write(framed(json.dumps(batch).encode()) + request(3, "textDocument/hover", HOVER))
    first, second, answered = server.replies(3)
    assert [error(first), error(second)] == [(4, INVALID_REQUEST), (None, INVALID_REQUEST)]
    assert "batch" in first["error"]["message"]
    assert answered == {"jsonrpc": "2.0", "id": 3, "result": None}


def test_requests_before_initialize_are_refused_and_notifications_dropped(server):
    server.write(notification("textDocument/didOpen", {"textDocument": {
        "uri": "file:///nowhere/x.py", "languageId": "python", "version": 1, "text": "x = 1\n"}})
        + request(1, "textDocument/hover", HOVER) + request(2, "shutdown"))
    assert [error(r) for r in server.replies(2)] == [(1, NOT_INITIALIZED), (2, NOT_INITIALIZED)]
    server.write(request(3, "initialize", INITIALIZE) + request(4, "textDocument/hover", HOVER))
    assert [(r["id"], "result" in r) for r in server.replies(2)] == [(3, True), (4, True)]
    assert not any(m.get("method") == "window/logMessage" for m in server.messages), server.messages  # no error


def test_requests_after_shutdown_are_refused_and_exit_then_exits_0(server):
    server.initialize()
    server.write(request(2, "shutdown") + request(3, "textDocument/hover", HOVER) + request(4, "shutdown"))
    assert server.replies(3) == [
        {"jsonrpc": "2.0", "id": 2, "result": None},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": INVALID_REQUEST,
                                              "message": "textDocument/hover: the server is shut down"}},
        {"jsonrpc": "2.0", "id": 4, "error": {"code": INVALID_REQUEST, "message": "shutdown: the server is shut down"}},
    ]
    server.write(notification("exit"))
    assert server.exit_code() == 0


@pytest.mark.parametrize("initialized", [True, False])
def test_exit_without_shutdown_exits_1(server, initialized):
    """pygls swallowed the SystemExit(1) of `exit`: the process exited 0."""
    if initialized:
        server.initialize()
    server.write(notification("exit"))  # stdin stays open: the process ends by itself
    assert server.exit_code() == 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_over_tcp_the_same_reader_resynchronises_and_exit_without_shutdown_exits_1(tmp_path):
    port = free_port()
    with open(tmp_path / "server.stderr", "wb") as stderr:
        process = subprocess.Popen([*SERVER, "--tcp", "--port", str(port)], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=stderr, cwd=ROOT)
        try:
            deadline = time.monotonic() + WAIT
            while True:
                try:
                    connection = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
                    break
                except ConnectionRefusedError:
                    assert process.poll() is None and time.monotonic() < deadline, "the server does not listen"
                    time.sleep(0.1)
            with connection, connection.makefile("rb") as stream:
                client = Client(stream, connection.sendall)
                client.initialize()
                cut = body({"id": 2, "method": "textDocument/hover", "params": HOVER})
                client.write(with_length(len(cut) - 3, cut) + request(3, "textDocument/hover", HOVER))
                refused, answered = client.replies(2)
                assert error(refused) == (None, PARSE_ERROR)
                assert (answered["id"], answered["result"]) == (3, None)
                client.write(notification("exit"))
                assert process.wait(timeout=WAIT) == 1
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


# --- Framer, byte by byte ---------------------------------------------------------------------

A = b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}'
B = b'{"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"text": "\\u65e5 Content-Length: 5\\r\\n\\r\\n"}}'


def frames(stream: bytes, limit: int = MAX_BODY) -> tuple[list, list]:
    """What `Framer` makes of `stream` fed at once, and fed one byte at a time."""
    whole = Framer(limit).feed(stream)
    framer = Framer(limit)
    return whole, [frame for i in range(len(stream)) for frame in framer.feed(stream[i:i + 1])]


@pytest.mark.parametrize("stream, expected", [
    (framed(A) + framed(B), [A, B]),
    (b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + framed(A)
     + b"content-length:%d\r\nContent-Type: x\r\n\r\n" % len(B) + B, [A, B]),
    (framed(b'{\r\n\r\n"text": "Content-Length:",\r\n"n": 1\r\n}') + framed(A),  # JSON whitespace, not headers
     [b'{\r\n\r\n"text": "Content-Length:",\r\n"n": 1\r\n}', A]),
    (with_length(len(A) - 1, A) + framed(B), [A[:-1], B]),  # too short: the rest is skipped
    (with_length(1, A) + framed(B), [A[:1], B]),
    (with_length(len(A) + 1, A) + framed(B), [A, B]),  # too long: cut where the next header begins
    (with_length(len(A) + 3, A) + framed(B), [A, B]),  # ... though the body ends inside that header's line
    (with_length(len(A) + 10**6, A) + framed(B), [A, B]),
    (b"garbage\r\n\r\n{}\r\n" + framed(A), [A]),
    (framed(b"") + framed(A), [b"", A]),
])
def test_framer_finds_every_message_a_wrong_length_leaves(stream, expected):
    whole, byte_by_byte = frames(stream)
    assert whole == byte_by_byte == expected


@pytest.mark.parametrize("length", [b"1000000000000", b"201", b"-1", b"1e3", b"0x10", b"\xff"])
def test_framer_refuses_a_length_that_is_no_number_of_bytes_up_to_its_limit(length):
    whole, byte_by_byte = frames(with_length(length, A + b"\r\n") + framed(B), limit=200)
    assert whole == byte_by_byte
    reason, after = whole
    assert isinstance(reason, str) and "up to 200:" in reason
    assert after == B


def test_framer_keeps_no_more_than_a_header_of_what_it_skips():
    framer = Framer()
    for _ in range(100):
        assert framer.feed(b"x" * 2**16) == []
    assert len(framer.buffer) < 16
    assert framer.feed(framed(A)) == [A]
    assert framer.buffer == b""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_ends_a_busy_server_promptly_and_quietly(server, signum):
    """SIGTERM and SIGHUP (a closed terminal) end it with 128 + the signal, SIGINT with 130, while it
    analyses a document it was just sent; no traceback."""
    server.initialize()
    source = (ROOT / "third_party" / "models" / "src" / "timm" / "models" / "vision_transformer.py")
    text = source.read_text() if source.exists() else "import torch\n" * 20_000
    server.write(notification("textDocument/didOpen", {"textDocument": {
        "uri": source.as_uri(), "languageId": "python", "version": 1, "text": text}}))
    time.sleep(0.3)
    started = time.monotonic()
    server.process.send_signal(signum)
    assert server.exit_code() == 128 + signum
    assert time.monotonic() - started < 5
    assert b"Traceback" not in (server.stderr.flush() or Path(server.stderr.name).read_bytes())
