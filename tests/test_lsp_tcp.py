"""`gradguard lsp --tcp`: any local process can connect, so running code (`gradguard.verify`) needs
the token the server was started with, and a non-loopback address must be asked for."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsp_wire import framed, read_message

GRADGUARD = [sys.executable, "-m", "gradguard"]
WRONG = "gradguard.verify over TCP needs the token the server was started with (GRADGUARD_LSP_TOKEN) as the setting \"token\""
OFF = ("gradguard.verify is off over TCP: start the server with GRADGUARD_LSP_TOKEN set and send that token "
       "as the setting \"token\"")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def connect(port: int) -> socket.socket:
    """A connection to the server just started on `port`, once it listens."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=60)
        except OSError:
            assert time.monotonic() < deadline, "the server did not listen"
            time.sleep(0.1)


def verify_over_tcp(tmp_path: Path, server_token: str | None, client_token: str | None) -> dict:
    """Start a TCP server, connect, ask it to verify a script that leaves a mark; the reply."""
    script = tmp_path / "run.py"
    script.write_text(f"import pathlib\npathlib.Path({str(tmp_path / 'ran')!r}).write_text('yes')\n")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "GRADGUARD_LSP_TOKEN"}
    if server_token is not None:
        env["GRADGUARD_LSP_TOKEN"] = server_token
    server = subprocess.Popen([*GRADGUARD, "lsp", "--tcp", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        connection = connect(port)
        options = {"trusted": True, "verify": {"device": "cpu"}, **({"token": client_token} if client_token else {})}
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}, "initializationOptions": options}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": script.as_uri(), "languageId": "python", "version": 1, "text": script.read_text()}}},
            {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
             "params": {"command": "gradguard.verify", "arguments": [script.as_uri()]}},
        ]
        with connection, connection.makefile("rb") as stream:
            connection.sendall(b"".join(framed(json.dumps(m).encode()) for m in messages))
            while (message := read_message(stream)) is not None:
                if message.get("id") == 2:
                    return message
        pytest.fail("no reply to the verify request")
    finally:
        server.kill()
        server.wait()


def test_the_servers_token_lets_verify_run(tmp_path):
    reply = verify_over_tcp(tmp_path, "s3cret", "s3cret")
    assert "error" not in reply, reply
    assert reply["result"]["problem"] is None
    assert (tmp_path / "ran").read_text() == "yes"


@pytest.mark.parametrize("server_token, client_token, message", [
    ("s3cret", None, WRONG), ("s3cret", "guess", WRONG), (None, None, OFF), (None, "anything", OFF), ("", "", OFF)])
def test_without_the_token_verify_is_refused_over_tcp(tmp_path, server_token, client_token, message):
    reply = verify_over_tcp(tmp_path, server_token, client_token)
    assert reply["error"]["code"] == -32600
    assert reply["error"]["message"] == message
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.com"])
def test_a_non_loopback_host_is_refused_unless_asked_for(host):
    run = subprocess.run([*GRADGUARD, "lsp", "--tcp", "--host", host], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert run.stderr == (f"gradguard: --host {host} is not a loopback address: any machine that reaches it could "
                          "use the server; pass --allow-remote if that is what you want\n")


def test_a_second_connection_is_closed_and_cannot_use_the_first_clients_trust(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(f"import pathlib\npathlib.Path({str(tmp_path / 'ran')!r}).write_text('yes')\n")
    port = _free_port()
    server = subprocess.Popen([*GRADGUARD, "lsp", "--tcp", "--port", str(port)],
                              env={**os.environ, "GRADGUARD_LSP_TOKEN": "s3cret"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        first = connect(port)
        with first, first.makefile("rb") as stream:
            first.sendall(framed(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
                "initializationOptions": {"trusted": True, "token": "s3cret"}}}).encode()))
            assert read_message(stream)["id"] == 1
            with socket.create_connection(("127.0.0.1", port), timeout=30) as second:
                second.sendall(framed(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
                                                  "params": {"command": "gradguard.verify",
                                                             "arguments": [script.as_uri()]}}).encode()))
                try:
                    answer = second.recv(1024)
                except ConnectionResetError:
                    answer = b""
                assert answer == b""  # closed, unanswered
        time.sleep(1)
        assert not (tmp_path / "ran").exists()
    finally:
        server.kill()
        server.wait()
