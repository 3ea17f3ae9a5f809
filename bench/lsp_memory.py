"""Language-server memory over time: `gradguard lsp` opening and closing the same files for long.

The server is driven over stdio by a small raw JSON-RPC client (pushed diagnostics, as
bench/lsp_latency.py drives it). One cycle opens 50 realistic programs (tests/programs and
tests/cases), waits for each one's diagnostics, then closes them all and waits for the empty
diagnostics each close publishes. After `--warm-up` cycles (50) the server's resident memory
(VmRSS of /proc/PID/status) is read, then again after `--cycles` more (2,000), and every
`--every` cycles in between. The target: the end's RSS at most 10 % over the warm-up's.

`python bench/lsp_memory.py [--cycles N] [--warm-up N] [--files N] [--no-append]` appends the
figures to bench/results.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results.md"
TIMEOUT = 120.0  # seconds a cycle's diagnostics may take
TARGET = 0.10  # growth allowed from the warm-up's RSS to the end's


def programs(count: int) -> list[Path]:
    """`count` files, taken in turn from tests/programs and tests/cases (sorted, so every run opens the same)."""
    pools = [sorted((ROOT / "tests" / folder).glob("*.py")) for folder in ("programs", "cases")]
    chosen: list[Path] = []
    for index in range(max(map(len, pools))):
        chosen += [pool[index] for pool in pools if index < len(pool)]
    return chosen[:count]


class Client:
    """A push-mode LSP client over pipes: counts, per document, the diagnostics of each version
    and those published on close (version null)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "gradguard", "lsp"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
        self.changed = threading.Condition()
        self.seen: set[tuple[str, int | None]] = set()
        self.closes: dict[str, int] = {}
        self.responses: dict[int, dict] = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while (line := stream.readline()) not in (b"", b"\r\n", b"\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if line == b"" or length is None:
                return
            message = json.loads(stream.read(length))
            if "method" in message and "id" in message:  # the server asks (configuration): nothing to say
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            with self.changed:
                if message.get("method") == "textDocument/publishDiagnostics":
                    params = message["params"]
                    if params.get("version") is None:
                        self.closes[params["uri"]] = self.closes.get(params["uri"], 0) + 1
                    else:
                        self.seen.add((params["uri"], params["version"]))
                elif "id" in message:
                    self.responses[message["id"]] = message
                self.changed.notify_all()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def wait(self, condition, what: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        with self.changed:
            while not condition():
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"no {what} in {TIMEOUT:.0f} s")
                self.changed.wait(0.5)

    def initialize(self) -> None:
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"processId": os.getpid(), "rootUri": ROOT.as_uri(), "capabilities": {}}})
        self.wait(lambda: 1 in self.responses, "initialize response")
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def cycle(self, files: list[tuple[str, str]], version: int) -> None:
        """Open every file at `version`, wait for their diagnostics; close them all, wait for the
        empty diagnostics of each close."""
        closes = dict(self.closes)
        for uri, text in files:
            self.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": version, "text": text}}})
        self.wait(lambda: all((uri, version) in self.seen for uri, _ in files), f"diagnostics of cycle {version}")
        for uri, _ in files:
            self.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
        self.wait(lambda: all(self.closes.get(uri, 0) > closes.get(uri, 0) for uri, _ in files),
                  f"closes of cycle {version}")
        self.seen = {key for key in self.seen if key[1] != version}

    def rss_mb(self) -> float:
        """The server's resident memory now (VmRSS), in MB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def close(self) -> None:
        try:
            self.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
            self.wait(lambda: 2 in self.responses, "shutdown response")
            self.send({"jsonrpc": "2.0", "method": "exit"})
            self.process.wait(timeout=10)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=2000, help="measured cycles after the warm-up (2,000)")
    parser.add_argument("--warm-up", type=int, default=50, help="cycles before the first reading (50)")
    parser.add_argument("--files", type=int, default=50, help="files opened and closed in each cycle (50)")
    parser.add_argument("--every", type=int, default=100, help="cycles between intermediate readings")
    parser.add_argument("--no-append", action="store_true", help="print only; do not append to bench/results.md")
    args = parser.parse_args()
    files = [(path.as_uri(), path.read_text(encoding="utf-8")) for path in programs(args.files)]
    client = Client()
    started = time.monotonic()
    readings: list[tuple[int, float]] = []
    try:
        client.initialize()
        for number in range(1, args.warm_up + args.cycles + 1):
            client.cycle(files, number)
            measured = number - args.warm_up
            if measured == 0 or (measured > 0 and (measured % args.every == 0 or measured == args.cycles)):
                readings.append((measured, client.rss_mb()))
                print(f"after {measured} measured cycles: RSS {readings[-1][1]:.1f} MB "
                      f"({time.monotonic() - started:.0f} s)", flush=True)
    finally:
        client.close()
    (_, warm), (_, end) = readings[0], readings[-1]
    growth = (end - warm) / warm
    report = "\n".join([
        f"# LSP memory over time, {datetime.datetime.now().isoformat(timespec='seconds')}", "",
        f"`bench/lsp_memory.py`: {args.files} files (tests/programs, tests/cases) opened and closed together, "
        f"{args.warm_up} warm-up cycles, then {args.cycles}; {time.monotonic() - started:.0f} s in all.  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}.", "",
        "| measured cycles | " + " | ".join(str(n) for n, _ in readings) + " |",
        "|---|" + "---:|" * len(readings),
        "| RSS (MB) | " + " | ".join(f"{mb:.1f}" for _, mb in readings) + " |", "",
        "| target | measured | result |", "|---|---|---|",
        f"| RSS growth after warm-up ≤ {TARGET:.0%} | {warm:.1f} → {end:.1f} MB ({growth:+.1%}) | "
        f"{'PASS' if growth <= TARGET else 'FAIL'} |", ""])
    print(report)
    if not args.no_append:
        with open(RESULTS, "a", encoding="utf-8") as results:
            results.write("\n" + report)
    return 0 if growth <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
