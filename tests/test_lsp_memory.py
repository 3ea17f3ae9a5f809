"""`gradguard lsp` running for hours: documents opened and closed again and again leave nothing
behind (bench/lsp_memory.py measures the memory of thousands of such cycles).

The server runs in a process of its own (this file run as a script), on its event loop, fed its
messages as `serve_stdio` feeds it; what it holds is counted with `gc.get_objects()` on its
analysis thread, between jobs.
"""

import asyncio
import gc
import json
import queue
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from gradguard.lsp.protocol import serve
from gradguard.lsp.server import server

from lsp_wire import framed

ROOT = Path(__file__).resolve().parent
FILES = 3
WARM_UP = 5
CYCLES = 20
WAIT = 60.0


class Captured:
    """The writer the server sends its messages to (from its event loop, or another thread)."""

    def __init__(self) -> None:
        self.messages: queue.Queue[dict] = queue.Queue()

    def write(self, data: bytes) -> None:
        self.messages.put(json.loads(data))

    def close(self) -> None:
        pass


def alive() -> Counter[str]:
    """The objects alive, by type, those `gc.freeze()` put aside included (they are frozen again)."""
    gc.unfreeze()
    gc.collect()
    counted = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())
    gc.freeze()
    return counted


async def open_and_close(root: Path) -> tuple[Counter[str], Counter[str]]:
    """The objects alive after `WARM_UP` cycles (each opens `FILES` programs, waits for their
    diagnostics, closes them all and waits for the empty diagnostics of each close), and after
    `CYCLES` more."""
    written = Captured()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    server.protocol.set_writer(written, include_headers=False)
    serving = asyncio.ensure_future(serve(server.protocol, chunks.get))

    def send(message: dict) -> None:
        chunks.put_nowait(framed(json.dumps({"jsonrpc": "2.0", **message}).encode()))

    async def until(wanted) -> None:
        deadline = asyncio.get_running_loop().time() + WAIT
        while True:
            while not written.messages.empty():
                message = written.messages.get()
                if "method" in message and "id" in message:  # the server asks: nothing to say
                    send({"id": message["id"], "result": None})
                wanted.discard(message.get("id") if "id" in message else
                               (message["params"].get("uri"), message["params"].get("version"))
                               if message.get("method") == "textDocument/publishDiagnostics" else None)
            if not wanted:
                return
            assert asyncio.get_running_loop().time() < deadline, f"the server did not send {wanted}"
            await asyncio.sleep(0.01)

    files = [(path.as_uri(), path.read_text()) for path in sorted(root.glob("*.py"))]
    send({"id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": root.as_uri(), "capabilities": {}, "initializationOptions": {}}})
    await until({1})
    send({"method": "initialized", "params": {}})
    counts = []
    for version in range(1, WARM_UP + CYCLES + 1):
        for uri, text in files:
            send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": version, "text": text}}})
        await until({(uri, version) for uri, _ in files})
        for uri, _ in files:
            send({"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
        await until({(uri, None) for uri, _ in files})
        if version in (WARM_UP, WARM_UP + CYCLES):
            counts.append(await server.scheduler.run(alive))
    chunks.put_nowait(b"")  # the client closes the stream
    await serving
    return counts[0], counts[1]


def grown_over_cycles(folder: Path) -> dict[str, int]:
    """The kinds of object that grew by `CYCLES` or more over the cycles on `folder`'s programs."""
    thresholds = gc.get_threshold()
    try:
        before, after = asyncio.run(open_and_close(folder))
    finally:
        server.shutdown()
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    return {kind: count for kind, count in (after - before).items() if count >= CYCLES}


def test_documents_opened_and_closed_again_and_again_leave_nothing_behind(tmp_path: Path):
    """No kind of object grows with the cycles: each open and close leaves none behind (pygls
    kept the future of every didOpen and didClose it ran, 1 kB each, for ever).

    The server runs in a process of its own, as it does in an editor: objects that tests run
    before in the same pytest worker left behind (torch's own test modules grew builtins and
    weak references there) are not the server's."""
    for path in sorted((ROOT / "programs").glob("*.py"))[:FILES]:
        shutil.copy(path, tmp_path / path.name)
    done = subprocess.run([sys.executable, __file__, str(tmp_path)], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {}


if __name__ == "__main__":
    print(json.dumps(grown_over_cycles(Path(sys.argv[1]))))
