"""The Language Server Protocol's framing, for tests that talk to `gradguard lsp` over raw pipes."""

from __future__ import annotations

import json
from typing import IO


def framed(body: bytes) -> bytes:
    """One message on the wire: its Content-Length header, then `body`."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream: IO[bytes]) -> dict | None:
    """The next message from `stream`; None once the server has closed it."""
    length = None
    while (line := stream.readline()) not in (b"", b"\r\n", b"\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if line == b"" or length is None:
        return None
    return json.loads(stream.read(length))
