"""pygls, adapted where it falls short of the protocol.

- Framing. pygls' reader trusts every Content-Length: one that is wrong misaligns it for good
  (bodies end without a line end, so from then on each body is read as part of the next header
  and every message is dropped: the server stays alive and silent), and 10**12 is allocated
  (MemoryError). `Framer` reads the base protocol itself and resynchronises; `serve_stdio` and
  `serve_tcp` run it in place of pygls' `start_io` and `start_tcp`.
- Answers the specification asks for that pygls does not give: -32700 for a body that is not
  JSON (pygls logs it); -32600 for JSON that is no JSON-RPC 2.0 message (`42`, `null`, `{"id": 99}`,
  a `method` that is no string: pygls logs those or answers -32603), with the id where one can be
  read and null where not; -32002 for a request before `initialize` (pygls runs it: -32603),
  -32600 for one after `shutdown` (pygls drops it), and -32602 for a request whose params do not
  validate (pygls drops it). LSP has no batches: each element of a JSON array is answered -32600
  (with its id; a notification in it gets no answer, as ever), an empty one gets one -32600.
- pygls keeps the future of every notification handler that is a coroutine or a generator (its
  own handlers of `didOpen` and `didClose` are), and of every coroutine its generators hand a
  request to (`workspace/executeCommand`), in `_request_futures`, under an id nothing ever pops:
  a Future, its lock and callbacks, about 1 kB each, for as long as the server runs. Here each
  handler's future is forgotten once it is done.
- `exit` raises SystemExit (1 unless a `shutdown` came first), which pygls' `start_io` swallowed:
  the process exited 0. Here it propagates.
- Documents split their lines where LSP does.
- cattrs builds the code that reads a message type the first time one arrives (ms for a
  notebook's change): `warm_up` has it built for what typing sends before the first keystroke.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from functools import partial
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import FeatureNotificationError, JsonRpcException, JsonRpcInternalError
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument, Workspace

from gradguard.source.lines import lines_of

if TYPE_CHECKING:
    from cattrs import Converter
    from pygls.lsp.server import LanguageServer

MAX_BODY = 64 * 2**20  # bytes: a larger Content-Length is answered, never allocated
CHUNK = 2**16  # bytes read at a time
MARKER = b"content-length:"
HEADER = re.compile(re.escape(MARKER), re.IGNORECASE)
HEADERS_LIMIT = 1024  # bytes from a Content-Length: to the blank line that ends the headers
# A Content-Length header line. No JSON text holds one: outside a string its name is no JSON,
# inside one its line end is not allowed (raw control characters). So where it begins inside a
# body, that body was given too long a length, and the next message begins there.
HEADER_LINE = re.compile(rb"content-length:[ \t]{0,8}\d{1,20}[ \t]{0,8}\r\n", re.IGNORECASE)
HEADER_LINE_REST = re.compile(rb"[ \t]{0,8}(?:\d{1,20}(?:[ \t]{0,8}\r?)?)?")  # what may follow MARKER so far
LONGEST_LINE = len(MARKER) + 8 + 20 + 8 + 2


class Framer:
    """The base protocol's framing (headers, a blank line, Content-Length bytes of body), read so
    that a wrong Content-Length costs at most the message it frames.

    `feed` returns, in order, bodies (bytes) and the reasons headers were refused (str: a length
    that is no number of bytes up to `limit`; the bytes after them are skipped). A body is cut
    where a header line begins inside it (its length was too long: the next message is neither
    waited for nor swallowed); what is not headers where headers should be (the rest of a body
    whose length was too short) is skipped up to the next Content-Length.
    """

    def __init__(self, limit: int = MAX_BODY) -> None:
        self.limit = limit
        self.buffer = bytearray()
        self.length: int | None = None  # the Content-Length of the body being read
        self.scanned = 0  # how far into that body no header line begins

    def feed(self, data: bytes) -> list[bytes | str]:
        """The frames that `data`, read after what was fed before, completes."""
        self.buffer += data
        frames: list[bytes | str] = []
        while (frame := self.next_frame()) is not None:
            frames.append(frame)
        return frames

    def next_frame(self) -> bytes | str | None:
        """The next body, or why headers were refused; None until more bytes come."""
        buffer = self.buffer
        while self.length is None:
            found = HEADER.search(buffer)
            if found is None:
                del buffer[:max(0, len(buffer) - len(MARKER) + 1)]  # keep what may begin a Content-Length:
                return None
            del buffer[:found.start()]
            end = buffer.find(b"\r\n\r\n", 0, HEADERS_LIMIT)
            later = HEADER.search(buffer, 1, end if end >= 0 else HEADERS_LIMIT)
            if later is not None or (end < 0 and len(buffer) >= HEADERS_LIMIT):  # no headers begin here
                del buffer[:later.start() if later is not None else 1]
                continue
            if end < 0:
                return None
            value = bytes(buffer[len(MARKER):buffer.index(b"\r\n")]).strip()
            del buffer[:end + 4]
            if not value.isdigit() or int(value) > self.limit:
                return (f"Content-Length {value.decode('ascii', 'replace')!r} is not a number of bytes up to "
                        f"{self.limit}: the message is skipped")
            self.length, self.scanned = int(value), 0
        inside = HEADER_LINE.search(buffer, max(0, self.scanned - LONGEST_LINE),
                                    min(len(buffer), self.length - 1 + LONGEST_LINE))
        if inside is not None and inside.start() < self.length:
            cut = inside.start()
        elif len(buffer) >= self.length and not self.ends_in_header_line(self.length):
            cut = self.length
        else:
            self.scanned = len(buffer)
            return None
        body = bytes(buffer[:cut])
        del buffer[:cut]
        self.length = None
        return body

    def ends_in_header_line(self, length: int) -> bool:
        """Whether the bytes read end in the beginning of a header line that begins inside the body
        of `length` bytes (whether to cut the body there is known only once that line has come)."""
        first = max(0, len(self.buffer) - LONGEST_LINE)
        tail = bytes(self.buffer[first:]).lower()
        for start in range(min(len(tail), length - first)):
            rest = tail[start:]
            if MARKER.startswith(rest) or (rest.startswith(MARKER) and HEADER_LINE_REST.fullmatch(rest, len(MARKER))):
                return True
        return False


class AnsweringProtocol(LanguageServerProtocol):
    """pygls' protocol, answering what pygls drops or answers wrongly (see the module docstring)."""

    def __init__(self, server: LanguageServer, converter: Converter) -> None:
        super().__init__(server, converter)
        self.initialize_received = False

    def refuse(self, msg_id: int | str | None, code: int, message: str) -> None:
        """An error response; `msg_id` None (null) when the request's id could not be read."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if "id" not in data or "method" not in data:
                raise
            self.refuse(data["id"], error.code, f"{data['method']}: the request's params are not valid LSP")
            return SimpleNamespace(jsonrpc="answered")  # handle_message skips it

    def receive(self, frame: bytes | str) -> None:
        """One frame from `Framer`: a message, or why none could be read (-32700), or why what was
        read is no JSON-RPC message (-32600)."""
        if isinstance(frame, str):
            self.refuse(None, lsp.ErrorCodes.ParseError, frame)
            return
        try:
            data = json.loads(frame)
        except (ValueError, RecursionError) as error:  # RecursionError: nested too deep to read
            self.refuse(None, lsp.ErrorCodes.ParseError, f"not JSON (is its Content-Length right?): {error}")
            return
        if isinstance(data, list):
            self.refuse_batch(data)
            return
        if (problem := envelope_problem(data)) is not None:
            self.refuse(readable_id(data), lsp.ErrorCodes.InvalidRequest, problem)
            return
        try:
            message = self.structure_message(data)
        except Exception as error:  # a notification whose params do not validate, say: as pygls' reader did
            self._server._report_server_error(error, JsonRpcException)
            return
        try:
            self.handle_message(message)
        except Exception as error:
            self._server._report_server_error(error, JsonRpcException)

    def refuse_batch(self, batch: list[Any]) -> None:
        """-32600 for each element of a batch but its notifications (none is run: LSP has no
        batches), one for an empty batch."""
        if not batch:
            self.refuse(None, lsp.ErrorCodes.InvalidRequest, "an empty batch: LSP has no batches")
        for element in batch:
            problem = envelope_problem(element)
            if problem is None and "id" not in element:
                continue  # a notification: never answered
            self.refuse(readable_id(element), lsp.ErrorCodes.InvalidRequest,
                        problem or "a message in a batch: LSP has no batches, it is not run")

    def handle_message(self, message: Any) -> None:
        """Requests before `initialize` are refused (-32002), and after `shutdown` (-32600);
        notifications then are dropped. `exit` and responses always go through."""
        method = getattr(message, "method", None)
        if method in _TYPING and self.initialize_received and not self._shutdown:
            self.typed(method, message.params)
        elif method in (None, lsp.EXIT) or (self.initialize_received and not self._shutdown):
            super().handle_message(message)
        elif method == lsp.INITIALIZE and not self._shutdown:
            self.initialize_received = True
            super().handle_message(message)
        elif hasattr(message, "id"):
            if self._shutdown:
                self.refuse(message.id, lsp.ErrorCodes.InvalidRequest, f"{method}: the server is shut down")
            else:
                self.refuse(message.id, lsp.ErrorCodes.ServerNotInitialized,
                            f"{method}: the server is not initialized (initialize comes first)")

    def _execute_handler(self, msg_id: str | int, handler: Callable[..., Any], callback: Callable[[Any], None],
                         args: tuple[Any, ...] | None = None, kwargs: dict[str, Any] | None = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if (future := self._request_futures.get(msg_id)) is not None:
            future.add_done_callback(partial(self._forget, msg_id))

    def _forget(self, msg_id: str | int, future: Any) -> None:
        """A handler's `future` is done: no cancellation can reach it any more. One cancelled is
        left to whoever cancelled it: `$/cancelRequest` took it out first, `shutdown` cancels
        while it goes through them all."""
        if not future.cancelled() and self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    def typed(self, method: str, params: Any) -> None:
        """A change typed in a document or a cell, handled at once: pygls' own handler (the
        workspace's update) and then the server's, both synchronous, without the futures, ids
        and generator steps pygls wraps every notification in (a tenth of a millisecond, on every
        keystroke)."""
        try:
            steps = self.fm.builtin_features[method](params)
            try:
                handler, args, kwargs = next(steps)
                while True:
                    handler, args, kwargs = steps.send(handler(*args, **(kwargs or {})))
            except StopIteration:
                pass
        except Exception:  # reported as pygls reports a notification handler's error
            self._server._report_server_error(JsonRpcInternalError.of(sys.exc_info()), FeatureNotificationError)


def envelope_problem(data: Any) -> str | None:
    """Why `data` (a message's JSON) is no JSON-RPC 2.0 request, notification or response (its
    params and result are LSP's to judge); None when it is one."""
    if not isinstance(data, dict):
        return f"a message is a JSON object, not {type(data).__name__ if data is not None else 'null'}"
    if data.get("jsonrpc") != "2.0":
        return 'a message\'s "jsonrpc" is "2.0"'
    if "method" in data:
        if not isinstance(data["method"], str):
            return 'a request\'s "method" is a string'
        if "id" in data and (not isinstance(data["id"], (int, str)) or isinstance(data["id"], bool)):
            return 'a request\'s "id" is an integer or a string'
    elif "id" not in data:
        return 'a message has a "method" (a request or a notification) or an "id" (a response)'
    return None


def readable_id(data: Any) -> int | float | str | None:
    """The id of an invalid message, to answer it with; None (null) when none can be read."""
    found = data.get("id") if isinstance(data, dict) else None
    return found if isinstance(found, (int, float, str)) and not isinstance(found, bool) else None


_TYPING = frozenset({lsp.TEXT_DOCUMENT_DID_CHANGE, lsp.NOTEBOOK_DOCUMENT_DID_CHANGE})  # `AnsweringProtocol.typed`


async def serve(protocol: AnsweringProtocol, read: Callable[[], Awaitable[bytes]]) -> None:
    """Handle the messages of the stream that `read` returns piece by piece, until it ends (b"")."""
    framer = Framer()
    while data := await read():
        for frame in framer.feed(data):
            protocol.receive(frame)


async def serve_stdio(protocol: AnsweringProtocol) -> None:
    """Serve stdin and stdout. A daemon thread reads stdin: a read that blocks never holds up the
    exit, as a thread of the default executor would (asyncio waits for those). It reads the file
    descriptor, not `sys.stdin.buffer`, whose lock it would hold while the interpreter exits (abort)."""
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    stdin = sys.stdin.fileno()

    def pump() -> None:
        chunk = b"more"
        while chunk:
            try:
                chunk = os.read(stdin, CHUNK)
            except OSError:  # stdin is broken: the stream ends
                chunk = b""
            try:
                loop.call_soon_threadsafe(chunks.put_nowait, chunk)
            except RuntimeError:  # the loop is closed: the server is exiting
                return

    protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    threading.Thread(target=pump, name="gradguard-stdin", daemon=True).start()
    await serve(protocol, chunks.get)


async def serve_tcp(protocol: AnsweringProtocol, host: str, port: int) -> None:
    """Serve the first client to connect to `host`:`port` until it disconnects. Every later
    connection is closed at once: the server's state (its trust, the token presented) is that
    client's, and a second client must not speak with it."""
    finished = asyncio.Event()
    taken = False

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal taken
        if taken:
            writer.close()
            return
        taken = True
        protocol.set_writer(writer)
        try:
            await serve(protocol, partial(reader.read, CHUNK))
        finally:
            finished.set()

    listener = await asyncio.start_server(connection, host, port)
    async with listener:
        await finished.wait()


class LspTextDocument(TextDocument):
    """A document whose lines end where LSP (and Python) end them: not at form feeds."""

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(lines_of(self.source))


class LspWorkspace(Workspace):
    """pygls' workspace, holding `LspTextDocument`s."""

    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=self._sync_kind, position_codec=self._position_codec)


_RANGE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
_TYPED = [{"range": _RANGE, "text": "x"}]
_SAMPLES: list[tuple[dict[str, Any], type]] = [
    ({"jsonrpc": "2.0", "method": lsp.TEXT_DOCUMENT_DID_CHANGE, "params": {
        "textDocument": {"uri": "file:///a.py", "version": 2}, "contentChanges": _TYPED}},
     lsp.DidChangeTextDocumentNotification),
    ({"jsonrpc": "2.0", "method": lsp.NOTEBOOK_DOCUMENT_DID_CHANGE, "params": {
        "notebookDocument": {"uri": "file:///a.ipynb", "version": 1}, "change": {"cells": {"textContent": [
            {"document": {"uri": "vscode-notebook-cell:/a.ipynb#1", "version": 2}, "changes": _TYPED}]}}}},
     lsp.DidChangeNotebookDocumentNotification),
]


def warm_up(converter: Converter) -> None:
    """Have `converter` build its code for the notifications typing sends (as pygls reads them:
    whole messages), and for the diagnostics published back, now rather than at the first keystroke."""
    for sample, kind in _SAMPLES:
        converter.structure(sample, kind)
    location = lsp.Location("file:///a.py", lsp.Range(lsp.Position(0, 0), lsp.Position(0, 1)))
    converter.unstructure(lsp.PublishDiagnosticsNotification(lsp.PublishDiagnosticsParams("file:///a.py", [
        lsp.Diagnostic(location.range, "m", lsp.DiagnosticSeverity.Error, "GG001", source="gradguard",
                       related_information=[lsp.DiagnosticRelatedInformation(location, "m")])], version=1)))
