"""Language-server latency and memory: `gradguard lsp` against `ruff server`, in the same run.

Both servers are driven over stdio by a small raw JSON-RPC client that asks for pushed
diagnostics (no pull capability in `initialize`). The session:

1. didOpen of timm's `vision_transformer.py` (5,309 lines): time to its first publishDiagnostics,
   the median over `--cold-starts` servers (this one and others started only for it);
2. typing inside `Block.forward()`, one didChange per character: a line that makes a tensor the
   output of `torch.sigmoid` and a line that changes it in place (`y.mul_(2)`: GG001 appears, and
   half-typed lines give syntax diagnostics), then backspacing it all away again. Each keystroke
   waits for the publishDiagnostics of its version: latency = from sending didChange of version
   v to receiving publishDiagnostics for version v;
3. 50 real files of timm open at once: the server's resident memory (VmRSS) once each has its
   diagnostics;
4. the file opened again with those 50 still open, and the same typing: latencies while the
   server holds 51 documents (and reads what they import between keystrokes);
5. all 51 closed at once, then a small file opened: the time to its first diagnostics.

`make bench-lsp` runs it (ruff from PyPI in bench/.venv-ruff, pinned in the Makefile) and appends
the figures to bench/results.md. `--skip-ruff`, `--rounds N`, `--no-append`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMM = ROOT / "third_party" / "models" / "src" / "timm"
TARGET = TIMM / "models" / "vision_transformer.py"
SMALL = TIMM / "layers" / "mlp.py"  # opened once every other file is closed
RUFF = ROOT / "bench" / ".venv-ruff" / "bin" / "ruff"
RESULTS = ROOT / "bench" / "results.md"
ANCHOR = "        return x\n\n\nclass ResPostBlock(nn.Module):"  # the end of Block.forward
TYPED = "\n        y = torch.sigmoid(x)\n        y.mul_(2)"  # Enter at the end of a line, then the new lines
TIMEOUT = 60.0


class Client:
    """A push-mode LSP client over pipes; records when each document version's diagnostics arrive."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, cwd=ROOT)
        self.changed = threading.Condition()
        self.responses: dict[int, dict] = {}
        self.arrivals: dict[tuple[str, int | None], float] = {}  # first publish of (uri, version)
        self.last_publish: dict[str, tuple[float, list]] = {}
        self.publishes: dict[str, int] = {}
        self.next_id = 0
        self.write_lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while (line := stream.readline()) not in (b"", b"\r\n", b"\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if line == b"" or length is None:
                with self.changed:
                    self.changed.notify_all()
                return
            message = json.loads(stream.read(length))
            now = time.perf_counter()
            if "method" in message and "id" in message:  # the server asks: configuration, registrations
                items = (message.get("params") or {}).get("items")
                self.send({"jsonrpc": "2.0", "id": message["id"],
                           "result": [None] * len(items) if isinstance(items, list) else None})
                continue
            with self.changed:
                if "id" in message:
                    self.responses[message["id"]] = message
                elif message.get("method") == "textDocument/publishDiagnostics":
                    params = message["params"]
                    uri = params["uri"]
                    self.arrivals.setdefault((uri, params.get("version")), now)
                    self.last_publish[uri] = (now, params["diagnostics"])
                    self.publishes[uri] = self.publishes.get(uri, 0) + 1
                self.changed.notify_all()

    def send(self, message: dict) -> float:
        body = json.dumps(message).encode("utf-8")
        with self.write_lock:
            sent = time.perf_counter()
            self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.process.stdin.flush()
        return sent

    def notify(self, method: str, params: object) -> float:
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def call(self, method: str, params: object) -> dict:
        self.next_id += 1
        id = self.next_id
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        self.wait(lambda: id in self.responses, f"the response to {method}")
        return self.responses.pop(id)

    def wait(self, condition, what: str, timeout: float = TIMEOUT) -> bool:
        deadline = time.perf_counter() + timeout
        with self.changed:
            while not condition():
                left = deadline - time.perf_counter()
                if left <= 0 or self.process.poll() is not None:
                    print(f"  (no {what} after {timeout:.0f} s)", file=sys.stderr)
                    return False
                self.changed.wait(left)
        return True

    def published_after(self, uri: str, version: int, sent: float) -> float | None:
        """When the diagnostics of `version` arrived (a server that sends no version: the first
        publish after `sent`)."""
        if (uri, version) in self.arrivals:
            return self.arrivals[(uri, version)]
        if (uri, None) in self.arrivals and uri in self.last_publish and self.last_publish[uri][0] >= sent:
            return self.last_publish[uri][0]
        return None

    def wait_version(self, uri: str, version: int, sent: float) -> float | None:
        self.wait(lambda: self.published_after(uri, version, sent) is not None,
                  f"diagnostics for version {version} of {uri}")
        return self.published_after(uri, version, sent)

    def initialize(self) -> None:
        response = self.call("initialize", {
            "processId": os.getpid(), "rootUri": ROOT.as_uri(), "rootPath": str(ROOT),
            "workspaceFolders": [{"uri": ROOT.as_uri(), "name": ROOT.name}],
            "capabilities": {  # push only: no textDocument.diagnostic
                "general": {"positionEncodings": ["utf-16"]},
                "textDocument": {"synchronization": {"didSave": True},
                                 "publishDiagnostics": {"relatedInformation": True, "versionSupport": True}},
                "workspace": {"configuration": True, "workspaceFolders": True},
            },
            "initializationOptions": {},
        })
        assert "result" in response, response
        self.notify("initialized", {})

    def open(self, path: Path, text: str, version: int = 1) -> float:
        return self.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "python", "version": version, "text": text}})

    def close(self, path: Path) -> None:
        self.notify("textDocument/didClose", {"textDocument": {"uri": path.as_uri()}})

    def rss_mb(self) -> tuple[float, float]:
        """VmRSS and VmHWM (peak) of the server process, in MB."""
        fields = {}
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024
        return fields["VmRSS"], fields["VmHWM"]

    def stop(self) -> None:
        try:
            if self.process.poll() is None:
                self.call("shutdown", None)
                self.notify("exit", None)
                self.process.wait(timeout=10)
        except Exception:
            pass
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


def keystrokes(text: str, rounds: int) -> list[tuple[int, int, int, int, str]]:
    """(line, column, end line, end column, new text) per keystroke: TYPED typed at the end of the
    line before Block.forward's `return x`, one character at a time, then deleted with backspace;
    `rounds` times."""
    line = text[:text.index(ANCHOR)].count("\n") - 1
    strokes = []
    for _ in range(rounds):
        row, column, typed = line, len(text.splitlines()[line]), []
        for char in TYPED:
            strokes.append((row, column, row, column, char))
            typed.append((row, column))
            row, column = (row + 1, 0) if char == "\n" else (row, column + 1)
        for (row, column), char in reversed(list(zip(typed, TYPED))):  # backspace, last character first
            end = (row + 1, 0) if char == "\n" else (row, column + 1)
            strokes.append((row, column, *end, ""))
    return strokes


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def fifty_files() -> list[Path]:
    files = sorted(p for p in (TIMM / "models").glob("*.py") if p.name != "__init__.py")
    return files[:50]


def first_open(client: Client) -> float | None:
    """Milliseconds from didOpen of TARGET to its first diagnostics, in a server just initialized."""
    client.initialize()
    sent = client.open(TARGET, TARGET.read_text(encoding="utf-8"))
    arrived = client.wait_version(TARGET.as_uri(), 1, sent)
    return (arrived - sent) * 1000 if arrived else None


def cold_open(command: list[str]) -> float | None:
    """`first_open` in a server of its own, started for it."""
    client = Client(command)
    try:
        return first_open(client)
    finally:
        client.stop()


def session(name: str, command: list[str], rounds: int, cold_starts: int) -> dict:
    print(f"{name}: {' '.join(command)}", file=sys.stderr)
    client = Client(command)
    result: dict = {"name": name}
    try:
        first = first_open(client)
        text = TARGET.read_text(encoding="utf-8")
        uri = TARGET.as_uri()
        typed = type_in(client, text, rounds, first_version=2)
        result.update(typed, versioned=typed["versioned"] and (uri, 1) in client.arrivals)
        client.close(TARGET)
        files = fifty_files()
        start = time.perf_counter()
        sends = {path: client.open(path, path.read_text(encoding="utf-8")) for path in files}
        done = sum(client.wait_version(path.as_uri(), 1, sent) is not None for path, sent in sends.items())
        result["fifty_s"] = time.perf_counter() - start
        result["fifty_done"] = done
        result["rss_mb"], result["peak_mb"] = client.rss_mb()
        version = result["keystrokes"] + 2  # versions go on from the first session's: a new open, then typing
        sent = client.open(TARGET, text, version)
        if client.wait_version(uri, version, sent) is not None:
            again = type_in(client, text, rounds, first_version=version + 1)
            result.update(busy_p50=again.get("p50"), busy_p95=again.get("p95"), busy_max=again.get("max"))
        result["busy_rss_mb"] = client.rss_mb()[0]
        for path in [*files, TARGET]:  # "close all editors", then open one
            client.close(path)
        sent = client.open(SMALL, SMALL.read_text(encoding="utf-8"))
        arrived = client.wait_version(SMALL.as_uri(), 1, sent)
        result["after_close_ms"] = (arrived - sent) * 1000 if arrived else None
    finally:
        client.stop()
    firsts = [first, *(cold_open(command) for _ in range(cold_starts - 1))]
    result["firsts"] = firsts
    if None not in firsts:
        result["first_ms"] = statistics.median(firsts)  # type: ignore[type-var]
    return result


def type_in(client: Client, text: str, rounds: int, first_version: int) -> dict:
    """Type the keystrokes into TARGET (open at `first_version - 1`), each waiting for the
    diagnostics of its version: latencies and what was published."""
    uri = TARGET.as_uri()
    latencies, missing, version = [], 0, first_version - 1
    diagnostic_sets = set()
    for row, column, end_row, end_column, new in keystrokes(text, rounds):
        version += 1
        sent = client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": row, "character": column},
                                          "end": {"line": end_row, "character": end_column}}, "text": new}]})
        arrived = client.wait_version(uri, version, sent)
        if arrived is None:
            missing += 1
        else:
            latencies.append((arrived - sent) * 1000)
            diagnostic_sets.add(tuple(sorted(str(d.get("code")) for d in client.last_publish[uri][1])))
    typed: dict = {"keystrokes": version - first_version + 1, "published": len(latencies), "missing": missing,
                   "diagnostic_sets": len(diagnostic_sets),
                   "versioned": all((uri, v) in client.arrivals for v in range(first_version, version + 1))}
    if latencies:
        typed.update(p50=statistics.median(latencies), p95=percentile(latencies, 0.95), max=max(latencies))
    return typed


def fmt(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def report(results: list[dict], rounds: int) -> str:
    load_start = os.getloadavg()
    lines = [f"# LSP latency benchmark, {datetime.datetime.now().isoformat(timespec='seconds')}", ""]
    text = TARGET.read_text(encoding="utf-8")
    lines.append(f"File: `{TARGET.relative_to(ROOT)}` ({text.count(chr(10)):,} lines); typing inside `Block.forward()`, "
                 f"{len(keystrokes(text, rounds))} keystrokes (one didChange each, waiting for its diagnostics). "
                 "Push diagnostics. Memory: 50 files of `timm/models` open.  ")
    lines.append(f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
                 f"load average {', '.join(f'{x:.2f}' for x in load_start)} at the end.")
    lines.append("")
    lines.append("| server | first diagnostics after didOpen (ms, median of cold starts) | didChange → diagnostics p50 (ms) | p95 (ms) "
                 "| max (ms) | versions published / sent | 50 files: all diagnosed (s) | RSS (MB) | peak RSS (MB) |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        lines.append(f"| {r['name']} | {fmt(r.get('first_ms'))} | {fmt(r.get('p50'), 1)} | {fmt(r.get('p95'), 1)} "
                     f"| {fmt(r.get('max'), 1)} | {r.get('published', 0)} / {r.get('keystrokes', 0)} "
                     f"| {fmt(r.get('fifty_s'), 1)} ({r.get('fifty_done', 0)}/50) | {fmt(r.get('rss_mb'))} "
                     f"| {fmt(r.get('peak_mb'))} |")
    for r in results:
        firsts = ", ".join(fmt(f) for f in r.get("firsts", []))
        lines.append(f"\n{r['name']}: first diagnostics in {len(r.get('firsts', []))} cold starts (a server "
                     f"started, initialized, then the file opened): {firsts} ms.")
    lines += ["", "The same typing again, the file reopened with the 50 others still open (their imports being "
              "read meanwhile):", "", "| server | p50 (ms) | p95 (ms) | max (ms) | RSS after (MB) |",
              "|---|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r['name']} | {fmt(r.get('busy_p50'), 1)} | {fmt(r.get('busy_p95'), 1)} "
                     f"| {fmt(r.get('busy_max'), 1)} | {fmt(r.get('busy_rss_mb'))} |")
    for r in results:
        lines.append(f"\n{r['name']}: all 51 files closed at once, then `{SMALL.relative_to(TIMM)}` opened: its "
                     f"first diagnostics after {fmt(r.get('after_close_ms'))} ms.")
    ours = results[0]
    ruff = next((r for r in results if r["name"].startswith("ruff")), None)
    for r in results:
        lines.append(f"\n{r['name']}: {r.get('diagnostic_sets', 0)} different sets of diagnostic codes while typing; "
                     f"{'every publish named its version' if r.get('versioned') else 'publishes without a version'}.")
    lines += ["", "| target | measured | result |", "|---|---|---|"]

    def verdict(ok: bool | None) -> str:
        return "—" if ok is None else ("PASS" if ok else "FAIL")

    if ruff is not None and ruff.get("p95") is not None and ours.get("p95") is not None:
        lines.append(f"| p95 ≤ ruff's p95 (same run) | {ours['p95']:.1f} ms vs {ruff['p95']:.1f} ms "
                     f"| {verdict(ours['p95'] <= ruff['p95'])} |")
    if ruff is not None and ruff.get("busy_p95") is not None and ours.get("busy_p95") is not None:
        lines.append(f"| p95 ≤ ruff's p95, 50 other files open | {ours['busy_p95']:.1f} ms vs {ruff['busy_p95']:.1f} ms "
                     f"| {verdict(ours['busy_p95'] <= ruff['busy_p95'])} |")
    first = ours.get("first_ms")
    lines.append(f"| first diagnostics ≤ 1 s after didOpen (median) | {fmt(first)} ms | {verdict(None if first is None else first <= 1000)} |")
    rss = ours.get("rss_mb")
    lines.append(f"| RSS ≤ 300 MB with 50 files open | {fmt(rss)} MB | {verdict(None if rss is None else rss <= 300)} |")
    lines.append(f"| a publish for every version | {ours.get('published', 0)} / {ours.get('keystrokes', 0)} "
                 f"| {verdict(ours.get('missing', 1) == 0)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-ruff", action="store_true")
    parser.add_argument("--rounds", type=int, default=1, help="how many times to type and delete the lines")
    parser.add_argument("--no-append", action="store_true", help=f"print only; do not append to {RESULTS.name}")
    parser.add_argument("--cold-starts", type=int, default=5,
                        help="servers started to time the first diagnostics (the machine's speed varies)")
    parser.add_argument("--ruff", default=str(RUFF), help="the ruff executable")
    parser.add_argument("--gradguard", default=f"{ROOT / '.venv' / 'bin' / 'gradguard'} lsp",
                        help="the command that starts gradguard's server (another build, an instrumented one)")
    args = parser.parse_args()
    if not TARGET.exists():
        print(f"{TARGET} is missing: run `make models`", file=sys.stderr)
        return 2
    results = [session("gradguard lsp", args.gradguard.split(), args.rounds, args.cold_starts)]
    if not args.skip_ruff:
        version = subprocess.run([args.ruff, "--version"], capture_output=True, text=True).stdout.strip()
        results.append(session(f"{version} server", [args.ruff, "server"], args.rounds, args.cold_starts))
    text = report(results, args.rounds)
    print(text)
    if not args.no_append:
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
