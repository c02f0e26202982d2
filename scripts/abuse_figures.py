"""What a misbehaving local client costs the daemon, measured against the release binary: each
figure starts a daemon of its own on a temporary socket and data dir, and stops it.

Run by scripts/abuse-figures (which builds the binary and the Python environment first)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, Dict, List, Tuple

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python", "src"))
import llmctl  # noqa: E402
from llmctl.v1 import limiter_pb2 as pb  # noqa: E402
from llmctl.v1 import limiter_pb2_grpc as rpc  # noqa: E402

BIN = os.path.join(os.path.dirname(__file__), "..", "target", "release", "llmctl")
CONFIG = """
[keys."good"]
requests_per_minute = 100000000
burst_requests = 1000000
"""
OPTIONS = [
    ("grpc.default_authority", "localhost"),
    ("grpc.max_receive_message_length", -1),
    ("grpc.max_send_message_length", -1),
]


class Daemon:
    def __init__(self, file_limit: int = 0) -> None:
        self.dir = tempfile.mkdtemp(prefix="llmctl-fig-")
        self.socket = os.path.join(self.dir, "s.sock")
        self.data = os.path.join(self.dir, "data")
        config = os.path.join(self.dir, "config.toml")
        with open(config, "w") as f:
            f.write(CONFIG)
        cmd = [BIN, "daemon", "--socket", self.socket, "--data-dir", self.data, "--config", config]
        if file_limit:
            cmd = ["sh", "-c", f'ulimit -n {file_limit} && exec "$0" "$@"'] + cmd
        self.proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL, env={**os.environ, "RUST_LOG": "warn"})
        while not os.path.exists(self.socket):
            time.sleep(0.02)
        time.sleep(1.5)  # the configured bucket fills
        self.stub = rpc.LimiterStub(grpc.insecure_channel("unix://" + self.socket, options=OPTIONS))

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def cpu_s(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def disk_mb(self) -> float:
        total = 0
        for root, _, files in os.walk(self.data):
            total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
        return total / 1e6

    def round_trips(self, n: int) -> Tuple[float, float]:
        out: List[float] = []
        for _ in range(n):
            t = time.perf_counter()
            r = self.stub.Acquire(pb.AcquireRequest(key="good", requests=1))
            self.stub.Report(pb.ReportRequest(lease_id=r.lease_id, status_code=200, attempt=1))
            out.append(time.perf_counter() - t)
        out.sort()
        return out[len(out) // 2] * 1000, out[len(out) * 99 // 100] * 1000

    def answer(self, key: str, headers: Dict[str, str]) -> None:
        r = self.stub.Acquire(pb.AcquireRequest(key=key, requests=1))
        if r.granted:
            self.stub.Report(pb.ReportRequest(lease_id=r.lease_id, status_code=200, headers=headers, attempt=1))

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(30)
        shutil.rmtree(self.dir, ignore_errors=True)


def client_id(d: Daemon) -> str:
    before = d.rss_mb()
    refused = 0
    for _ in range(200):
        try:
            d.stub.Acquire(pb.AcquireRequest(key="good", requests=1, client_id="x" * (3 << 20)))
        except grpc.RpcError as e:
            refused += e.code() == grpc.StatusCode.INVALID_ARGUMENT
    return f"200 Acquires with a 3 MiB client_id: {refused} refused; RSS {before:.0f} -> {d.rss_mb():.0f} MB"


def headers(d: Daemon) -> str:
    before = d.rss_mb()
    junk = {f"x-ratelimit-junk-{i}": "v" * 4000 for i in range(63)}
    junk["x-ratelimit-limit-requests"] = "9" * 4000
    for k in range(1000):
        d.answer(f"h/{k}", junk)
    size = d.stub.Status(pb.StatusRequest()).ByteSize()
    return f"1,000 keys answered with 64 headers of 4 KB: RSS {before:.0f} -> {d.rss_mb():.0f} MB, Status {size / 1e6:.2f} MB"


def claims(d: Daemon) -> str:
    before = d.rss_mb()
    c = llmctl.Client(d.socket, fail_mode="closed")
    blob = os.urandom(100 * 1024)
    for i in range(1000):
        c.claim(f"job-{i}", 600)
        c.complete(f"job-{i}", blob)
    c.close()
    time.sleep(1)
    return f"1,000 claims completed with 100 KB each: RSS {before:.0f} -> {d.rss_mb():.0f} MB, store {d.disk_mb():.0f} MB"


def steady(d: Daemon) -> str:
    seconds = float(os.environ.get("STEADY_SECONDS", "60"))
    before = d.rss_mb()
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        r = d.stub.Acquire(pb.AcquireRequest(key="good", requests=1))
        d.stub.Report(pb.ReportRequest(lease_id=r.lease_id, status_code=200, attempt=1))
        n += 1
    return f"steady load, {n} Acquire+Report in {seconds:.0f} s: RSS {before:.1f} -> {d.rss_mb():.1f} MB"


def watcher(sock: str) -> None:
    def one() -> None:
        try:
            stub = rpc.LimiterStub(grpc.insecure_channel("unix://" + sock, options=OPTIONS))
            for _ in stub.Watch(pb.WatchRequest(interval_ms=50)):
                pass
        except grpc.RpcError:
            pass

    for _ in range(2):
        threading.Thread(target=one, daemon=True).start()
    time.sleep(3600)


def watch(d: Daemon) -> str:
    ordinary = {
        "x-ratelimit-limit-requests": "10000",
        "x-ratelimit-remaining-requests": "9999",
        "x-ratelimit-reset-requests": "6ms",
        "x-ratelimit-limit-tokens": "2000000",
        "x-ratelimit-remaining-tokens": "1999000",
        "x-ratelimit-reset-tokens": "30ms",
    }
    for k in range(9990):
        d.answer(f"w/{k}", ordinary)
    base = d.round_trips(500)
    size = d.stub.Status(pb.StatusRequest()).ByteSize()
    procs = [subprocess.Popen([sys.executable, __file__, "--watcher", d.socket]) for _ in range(4)]
    time.sleep(3)
    loaded = d.round_trips(500)
    rss = d.rss_mb()
    for p in procs:
        p.kill()
    return (
        f"10,000 keys (Status {size / 1e6:.1f} MB): Acquire+Report p50/p99 {base[0]:.2f}/{base[1]:.2f} ms, "
        f"with 8 Watch streams at 50 ms from 4 processes {loaded[0]:.2f}/{loaded[1]:.2f} ms; RSS {rss:.0f} MB"
    )


def idle(d: Daemon) -> str:
    conns = []
    for _ in range(1100):
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(d.socket)
        except OSError:
            break
        conns.append(s)
    t = time.time()
    while subprocess.run([BIN, "acquire", "good", "--socket", d.socket], capture_output=True).returncode:
        time.sleep(0.1)
    waited = time.time() - t
    c0 = d.cpu_s()
    time.sleep(2)
    used = d.cpu_s() - c0
    return f"{len(conns)} connections that send nothing (open-file limit 1200): a new client got a lease after {waited:.1f} s; daemon CPU {used:.2f} s in 2 s"


FIGURES: List[Tuple[str, Callable[[Daemon], str], int]] = [
    ("client_id", client_id, 0),
    ("headers", headers, 0),
    ("claims", claims, 0),
    ("watch", watch, 0),
    ("idle", idle, 1200),
    ("steady", steady, 0),
]

# Figures measured by an ignored end-to-end test built in release mode (its misbehaving client
# is the Rust one the test command runs): name -> the test's name.
TEST_FIGURES: Dict[str, str] = {
    "tables": "chaos::figure_well_behaved_p99_beside_a_client_filling_every_table",
    "proxy": "proxy_abuse::figure_proxy_abuse",
}


def test_figure(test: str) -> str:
    run = subprocess.run(
        ["cargo", "test", "--locked", "--release", "--test", "integration", "--", "--ignored", "--exact", test, "--nocapture"],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        raise SystemExit(f"{test} failed (exit {run.returncode}):\n{run.stdout}\n{run.stderr}")
    out = run.stdout
    lines = [line.removeprefix("figure: ") for line in out.splitlines() if line.startswith("figure: ")]
    if not lines:
        raise SystemExit(f"{test} printed no figure:\n{out}")
    return "\n  ".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--watcher"]:
        watcher(sys.argv[2])
        sys.exit(0)
    wanted = sys.argv[1:] or [name for name, _, _ in FIGURES] + list(TEST_FIGURES)
    unknown = [name for name in wanted if name not in TEST_FIGURES and name not in {n for n, _, _ in FIGURES}]
    if unknown:
        names = ", ".join([n for n, _, _ in FIGURES] + list(TEST_FIGURES))
        raise SystemExit(f"abuse-figures: no figure named {', '.join(unknown)}; the figures are: {names}")
    for name, figure, file_limit in FIGURES:
        if name in wanted:
            d = Daemon(file_limit)
            try:
                print(f"{name}: {figure(d)}", flush=True)
            finally:
                d.stop()
    for name, test in TEST_FIGURES.items():
        if name in wanted:
            print(f"{name}: {test_figure(test)}", flush=True)
