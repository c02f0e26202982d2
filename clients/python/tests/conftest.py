"""Starting the real llmctl daemon and fake provider for the tests, on temporary sockets and
loopback ports, and stopping them after."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import grpc
import pytest

import llmctl
from llmctl._autostart import answers
from llmctl.v1 import limiter_pb2 as pb
from llmctl.v1.limiter_pb2_grpc import LimiterStub

REPO = Path(__file__).resolve().parents[3]
# A client given no socket starts a daemon when none answers; the tests name their daemons'
# sockets, and those that test starting one turn it back on in their own processes.
os.environ.setdefault("LLMCTL_AUTOSTART", "0")


def llmctl_bin() -> str:
    """The binary under test: $LLMCTL_BIN, else target/debug/llmctl. Waits a little if it is
    being rebuilt."""
    path = Path(os.environ.get("LLMCTL_BIN") or REPO / "target" / "debug" / "llmctl")
    deadline = time.monotonic() + 60
    while not (path.is_file() and os.access(path, os.X_OK)):
        if time.monotonic() > deadline:
            pytest.fail(f"no llmctl binary at {path}; build it with `cargo build` or set LLMCTL_BIN")
        time.sleep(0.5)
    return str(path)


def wait_until(pred: Callable[[], Any], timeout: float, what: str, every: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


class Daemon:
    """A real `llmctl daemon` on a socket in its own temporary folder."""

    def __init__(self, config: str = "") -> None:
        # Short paths: a Unix socket path must fit in 108 bytes.
        self.dir = Path(tempfile.mkdtemp(prefix="llmctl-py-"))
        self.socket = str(self.dir / "run" / "llmctl.sock")
        self.data = str(self.dir / "state")
        self.config = self.dir / "config.toml"
        self.config.write_text(config)
        self.proc: Optional[subprocess.Popen] = None
        self.start()

    def start(self) -> None:
        log = open(self.dir / "daemon.log", "ab")
        self.proc = subprocess.Popen(
            [
                llmctl_bin(),
                "daemon",
                "--socket",
                self.socket,
                "--data-dir",
                self.data,
                "--config",
                str(self.config),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "RUST_LOG": "warn"},
        )
        log.close()
        proc = self.proc

        def up() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"the daemon exited with {proc.returncode}: {self.log()}")
            return answers(self.socket)

        wait_until(up, 15, "the daemon to answer")

    def log(self) -> str:
        try:
            return (self.dir / "daemon.log").read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [llmctl_bin(), *args],
            env={**os.environ, "LLMCTL_SOCKET": self.socket},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def raw_status(self) -> Any:
        """The daemon's status through the bare generated stub: no session of its own, and
        independent of the client under test."""
        options = [("grpc.default_authority", "localhost"), ("grpc.use_local_subchannel_pool", 1)]
        with grpc.insecure_channel("unix://" + self.socket, options=options) as ch:
            return LimiterStub(ch).Status(pb.StatusRequest(), timeout=10)

    def status(self) -> Dict[str, Any]:
        return {k.key: k for k in self.raw_status().keys}

    def key(self, key: str) -> Any:
        k = self.status().get(key)
        assert k is not None, f"key {key} not in the daemon's status"
        return k

    def sessions(self) -> int:
        return int(self.raw_status().sessions)

    def wait_full(self, key: str, dimension: str = "requests", timeout: float = 30) -> None:
        """Waits until the bucket is full (a new daemon starts its buckets empty)."""

        def full() -> bool:
            k = self.status().get(key)
            if k is None:
                return False
            b = next((b for b in k.buckets if b.dimension == dimension), None)
            assert b is not None, f"no {dimension} bucket on {key}: {k}"
            return b.level >= b.capacity

        wait_until(full, timeout, f"{key} {dimension} to fill", every=0.05)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Provider:
    """A real `llmctl fake-provider` on a free loopback port."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [llmctl_bin(), "fake-provider", "--listen", "127.0.0.1:0", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on http://127.0.0.1:"):
            self.proc.kill()
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"fake-provider did not start: {line!r} {err}")
        self.url = line.split("listening on ", 1)[1].rstrip("/")
        # Keep the pipes from filling up.
        self.proc.stdout.close()

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("content-type", "application/json")
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read()
        return json.loads(raw) if raw.strip() else None

    def stats(self) -> Dict[str, Any]:
        return self._call("GET", "/stats")

    def reset(self) -> None:
        self._call("POST", "/reset")

    def faults(self, specs: List[str]) -> None:
        self._call("POST", "/faults", specs)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc.stderr:
            self.proc.stderr.close()


class Proxy:
    """A real `llmctl proxy` on a free loopback port, openai and anthropic at `provider`."""

    def __init__(self, daemon: Daemon, provider: Provider, extra: str = "") -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="llmctl-px-"))
        config = self.dir / "config.toml"
        config.write_text(
            f"[proxy]\n{extra}\n"
            f'[proxy.upstreams.openai]\nurl = "{provider.url}"\n'
            f'[proxy.upstreams.anthropic]\nurl = "{provider.url}"\n'
        )
        self.proc = subprocess.Popen(
            [
                llmctl_bin(),
                "proxy",
                "--listen",
                "127.0.0.1:0",
                "--config",
                str(config),
                "--socket",
                daemon.socket,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        if not m:
            self.proc.kill()
            raise AssertionError(f"the proxy did not start: {line!r}")
        self.url = m.group(1)
        # Keep the pipe from filling up.
        self.proc.stderr.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def start_daemon() -> Iterator[Callable[..., Daemon]]:
    started: List[Daemon] = []

    def start(config: str = "") -> Daemon:
        d = Daemon(config)
        started.append(d)
        return d

    yield start
    for d in started:
        d.close()


@pytest.fixture
def daemon(start_daemon: Callable[..., Daemon]) -> Daemon:
    return start_daemon("")


@pytest.fixture
def start_provider() -> Iterator[Callable[..., Provider]]:
    started: List[Provider] = []

    def start(*args: str) -> Provider:
        p = Provider(*args)
        started.append(p)
        return p

    yield start
    for p in started:
        p.close()


@pytest.fixture
def provider(start_provider: Callable[..., Provider]) -> Provider:
    return start_provider()


@pytest.fixture
def client(daemon: Daemon) -> Iterator[llmctl.Client]:
    c = llmctl.Client(daemon.socket, fail_mode="closed")
    yield c
    c.close()


@pytest.fixture
def setup(daemon: Daemon, start_provider: Callable[..., Provider]) -> Iterator[Any]:
    """The daemon, a provider whose answers read half their input from cache (so Anthropic's
    split usage is exercised), and a fail-closed client of the daemon."""
    provider = start_provider("--cache-share", "0.5", "--completion-tokens", "12", "--rpm", "100000")
    c = llmctl.Client(daemon.socket, fail_mode="closed")
    yield daemon, provider, c
    c.close()


def settled(daemon: Daemon, key: str, tokens: int) -> None:
    """The key's leases all settled, at `tokens` used."""
    k = daemon.key(key)
    assert (k.tokens_used, k.tokens_outstanding, k.in_flight) == (tokens, 0, 0), k


def provider_tokens(provider: Provider) -> int:
    """The tokens the provider counted: input and output."""
    s = provider.stats()
    return int(s["input_tokens"]) + int(s["output_tokens"])


def run_python(
    code: str, env: Optional[Dict[str, str]] = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    """Runs Python code in another process (another client of the same daemon)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
