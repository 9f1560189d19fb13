"""The project's HTTP servers in tests: a free loopback port, a server process (its stderr in a
log file, not a pipe: a full pipe would stall it), waiting until it listens, stopping it, and
the addresses it listens on (read from the kernel's socket tables, so a wrong bind shows)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

TOKEN = "t0ken-for-the-tests"  # what test servers are started with (AGENT_WORLD_TOKEN)
AUTH = {"Authorization": f"Bearer {TOKEN}"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "tests", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args: Sequence[str], log: Path, token: str | None = TOKEN,
          cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`python -m agent_world.cli ARGS` (or `python ARGS` when ARGS starts with "-m"), with
    AGENT_WORLD_TOKEN set to `token` (None: unset, the server makes one)."""
    env = {**os.environ, **(env or {})}
    env.pop("AGENT_WORLD_TOKEN", None)
    if token is not None:
        env["AGENT_WORLD_TOKEN"] = token
    argv = [sys.executable, *(args if args[0] == "-m" else ["-m", "agent_world.cli", *args])]
    with log.open("w") as err:
        return subprocess.Popen(argv, cwd=cwd, env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=err)


def wait_listening(proc: subprocess.Popen, url: str, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _address(hex_addr: str) -> str:
    raw = bytes.fromhex(hex_addr)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    # IPv6: four 32-bit words, each in host (little-endian) order
    return socket.inet_ntop(socket.AF_INET6, b"".join(raw[i:i + 4][::-1]
                                                       for i in range(0, 16, 4)))


def listening_hosts(port: int) -> set[str]:
    """The local addresses with a TCP socket listening on `port` (Linux /proc)."""
    hosts = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            addr, _, hex_port = fields[1].partition(":")
            if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                hosts.add(_address(addr))
    return hosts
