"""Idempotency records against the real daemon: claim, complete and run_once, across processes
and across a daemon killed with SIGKILL."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, List

import pytest

import llmctl
from conftest import Daemon


def test_claim_then_complete_then_done(daemon: Daemon, client: llmctl.Client) -> None:
    before = time.time()
    first = client.claim("job-1", 30)
    assert isinstance(first, llmctl.ClaimResult)
    assert (first.key, first.state, first.result, first.claimed) == ("job-1", "claimed", None, True)
    assert first.since is not None and first.since.tzinfo is not None
    assert before - 1 <= first.since.timestamp() <= time.time() + 1
    again = client.claim("job-1", 30)
    assert (again.state, again.result, again.since) == ("pending", None, first.since)
    client.complete("job-1", b"\x00result\xff")
    done = client.claim("job-1", 30)
    assert (done.state, done.result, done.since) == ("done", b"\x00result\xff", None)
    assert daemon.raw_status().duplicates_suppressed == 2


def test_a_claim_past_its_ttl_may_be_claimed_again(client: llmctl.Client) -> None:
    assert client.claim("short", 0.3).state == "claimed"
    assert client.claim("short", 0.3).state == "pending"
    time.sleep(0.4)
    assert client.claim("short", dt.timedelta(seconds=5)).state == "claimed"


def test_run_once_does_the_work_once_and_then_returns_the_stored_result(
    daemon: Daemon, client: llmctl.Client
) -> None:
    calls: List[int] = []

    def work() -> bytes:
        calls.append(1)
        return json.dumps({"answer": 42}).encode()

    assert client.run_once("job-2", work) == b'{"answer": 42}'
    assert client.run_once("job-2", work) == b'{"answer": 42}'
    with llmctl.Client(daemon.socket, fail_mode="closed") as other:
        assert other.run_once("job-2", work, ttl=5) == b'{"answer": 42}'
    assert calls == [1]
    assert client.claim("job-2", 5).result == b'{"answer": 42}'


def test_run_once_stores_an_empty_result(client: llmctl.Client) -> None:
    assert client.run_once("empty", lambda: b"") == b""
    again = client.claim("empty", 5)
    assert (again.state, again.result) == ("done", b"")


# Holds the work "job" in run_once until the file argv[2] exists, then completes it.
HOLDER = """
import os, sys, time, llmctl
c = llmctl.Client(sys.argv[1], fail_mode="closed")
def work():
    print("working", flush=True)
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.01)
    return b"from the holder"
print(c.run_once("job", work, ttl=60).decode(), flush=True)
"""


def test_run_once_raises_pending_while_another_process_holds_the_work(
    daemon: Daemon, client: llmctl.Client, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, daemon.socket, str(go)],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "working"
        mine: List[int] = []

        def work() -> bytes:
            mine.append(1)
            return b"mine"

        with pytest.raises(llmctl.Pending) as e:
            client.run_once("job", work)
        assert isinstance(e.value, llmctl.LlmctlError)
        assert e.value.key == "job" and e.value.since is not None
        assert 0 <= time.time() - e.value.since.timestamp() < 30
        assert "'job' is being done by another worker since" in str(e.value)
        assert mine == [], "fn must not run while another worker holds the claim"
        go.touch()
        assert holder.stdout.readline().strip() == "from the holder"
        assert holder.wait(30) == 0
        assert client.run_once("job", work) == b"from the holder"
        assert mine == []
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(10)
        if holder.stdout:
            holder.stdout.close()


# Claims every key of a list at the same moment as the other racers; prints the states.
RACER = """
import json, os, sys, time, llmctl
c = llmctl.Client(sys.argv[1], fail_mode="closed")
assert c.wait_connected(10)
c.ping()
print("ready", flush=True)
sys.stdin.readline()
keys = json.loads(sys.argv[2])
print(json.dumps([c.claim(k, 60).state for k in keys]), flush=True)
"""


def test_processes_racing_for_one_claim_get_exactly_one_claimed(daemon: Daemon) -> None:
    keys = [f"race-{i}" for i in range(40)]
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, daemon.socket, json.dumps(keys)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    try:
        for p in racers:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        for p in racers:  # all at once, as near as the OS lets us
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        states = []
        for p in racers:
            assert p.stdout is not None
            states.append(json.loads(p.stdout.readline()))
            assert p.wait(30) == 0
    finally:
        for p in racers:
            if p.poll() is None:
                p.kill()
            p.wait(10)
            for f in (p.stdin, p.stdout):
                if f:
                    f.close()
    for i, key in enumerate(keys):
        per_key = sorted(s[i] for s in states)
        assert per_key == ["claimed", "pending", "pending", "pending"], f"{key}: {per_key}"
    print(f"claims won per process: {[s.count('claimed') for s in states]}")
    assert daemon.raw_status().duplicates_suppressed == 3 * len(keys)


def test_a_claim_survives_the_daemon_killed_right_after_claimed(
    daemon: Daemon, client: llmctl.Client
) -> None:
    claimed = client.claim("durable", 300)
    assert claimed.state == "claimed"
    daemon.kill9()
    daemon.start()
    # The same client: the claim waits for the restarted daemon rather than failing.
    after = client.claim("durable", 300)
    assert (after.state, after.since) == ("pending", claimed.since)
    client.complete("durable", b"kept")
    daemon.kill9()
    daemon.start()
    with llmctl.Client(daemon.socket, fail_mode="closed") as fresh:
        assert fresh.run_once("durable", lambda: b"again") == b"kept"


def test_a_failing_fn_stores_nothing_and_its_claim_lapses(client: llmctl.Client) -> None:
    class Boom(Exception):
        pass

    def fails() -> bytes:
        raise Boom("the provider said no")

    with pytest.raises(Boom):
        client.run_once("fragile", fails, ttl=0.3)
    with pytest.raises(llmctl.Pending):
        client.run_once("fragile", lambda: b"too soon", ttl=0.3)
    time.sleep(0.4)
    assert client.run_once("fragile", lambda: b"second try") == b"second try"


def test_a_fn_that_returns_no_bytes_is_refused_and_its_claim_lapses(client: llmctl.Client) -> None:
    with pytest.raises(
        llmctl.InvalidArgument, match=r"fn's result for 'typed' must be bytes, not str \(encode it"
    ):
        client.run_once("typed", lambda: "text", ttl=0.3)  # type: ignore[arg-type,return-value]
    assert client.claim("typed", 0.3).state == "pending"
    time.sleep(0.4)
    assert client.run_once("typed", lambda: b"bytes") == b"bytes"


def test_the_command_line_and_the_python_client_share_the_records(
    daemon: Daemon, client: llmctl.Client
) -> None:
    out = daemon.cli("claim", "shared", "--ttl", "60s")
    assert out.returncode == 0, out.stderr
    with pytest.raises(llmctl.Pending):
        client.run_once("shared", lambda: b"python")
    out = daemon.cli("complete", "shared", "--result", "from the shell")
    assert out.returncode == 0, out.stderr
    assert client.run_once("shared", lambda: b"python") == b"from the shell"
    client.run_once("py", lambda: b"from python")
    out = daemon.cli("claim", "py", "--ttl", "60s")
    assert out.returncode == 3 and out.stdout.strip() == "from python", (
        out.returncode,
        out.stdout,
        out.stderr,
    )


@pytest.mark.parametrize(
    "key, ttl, words",
    [
        ("", 5, "idempotency key is empty"),
        (None, 5, "idempotency key must be a string"),
        (b"job", 5, "idempotency key must be a string"),
        ("k" * 1025, 5, "is 1025 bytes; keys are at most 1024"),
        ("job\n1", 5, "control characters"),
        ("job", 0, "ttl = 0; give how long the work may take"),
        ("job", -1, "ttl = -1 is negative"),
        ("job", None, "ttl is missing"),
        ("job", "10s", "ttl must be a number of seconds or a timedelta"),
        ("job", 8 * 86400, "over the maximum of 604800 s"),
    ],
)
def test_bad_claim_input_is_refused_before_the_daemon_is_asked(key: Any, ttl: Any, words: str) -> None:
    c = llmctl.Client("/nonexistent/llmctl.sock")
    try:
        with pytest.raises(llmctl.InvalidArgument) as e:
            c.claim(key, ttl)
        assert isinstance(e.value, ValueError) and words in str(e.value)
        with pytest.raises(llmctl.InvalidArgument):
            c.run_once(key, lambda: b"", ttl=ttl)
    finally:
        c.close()


@pytest.mark.parametrize(
    "result, words",
    [
        ("text", "must be bytes, not str (encode it"),
        ({"a": 1}, "must be bytes, not dict (serialise it"),
        (None, "must be bytes, not NoneType"),
        (b"x" * (16 * 1024 * 1024 + 1), "is 16777217 bytes, over the 16777216 bytes a record holds"),
    ],
)
def test_a_bad_result_is_refused_before_the_daemon_is_asked(result: Any, words: str) -> None:
    c = llmctl.Client("/nonexistent/llmctl.sock")
    try:
        with pytest.raises(llmctl.InvalidArgument) as e:
            c.complete("job", result)
        assert words in str(e.value)
    finally:
        c.close()


def test_the_largest_key_and_result_are_accepted(client: llmctl.Client) -> None:
    key = "é" * 512  # 1024 bytes
    assert client.claim(key, 5).state == "claimed"
    big = bytes(range(256)) * 4096  # 1 MiB
    client.complete(key, bytearray(big))
    assert client.claim(key, 5).result == big


def test_without_a_daemon_claims_fail_even_when_fail_open(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("llmctl._client.CALL_TIMEOUT", 0.5)
    with llmctl.Client("/nonexistent/llmctl.sock", fail_mode="open") as c:
        started = time.monotonic()
        with pytest.raises(llmctl.Unavailable, match="no llmctl daemon is answering"):
            c.claim("job", 5)
        assert time.monotonic() - started < 5
        calls: List[int] = []

        def work() -> bytes:
            calls.append(1)
            return b""

        with pytest.raises(llmctl.Unavailable):
            c.run_once("job", work)
        assert calls == [], "work must not run unclaimed"
        with pytest.raises(llmctl.Unavailable):
            c.complete("job", b"")


def test_the_async_client_claims_and_runs_once(daemon: Daemon) -> None:
    async def main() -> None:
        async with llmctl.AsyncClient(daemon.socket, fail_mode="closed") as c:
            first = await c.claim("async-job", 30)
            assert first.state == "claimed" and first.since is not None
            with pytest.raises(llmctl.Pending) as e:
                await c.run_once("async-job", lambda: b"never")
            assert e.value.since == first.since
            await c.complete("async-job", b"stored")
            assert (await c.claim("async-job", 30)).result == b"stored"

            calls: List[int] = []

            async def work() -> bytes:
                calls.append(1)
                await asyncio.sleep(0.01)
                return b"awaited"

            assert await c.run_once("coro", work) == b"awaited"
            assert await c.run_once("coro", work) == b"awaited"
            assert await c.run_once("plain", lambda: b"plain") == b"plain"
            assert calls == [1]
            with pytest.raises(ZeroDivisionError):
                await c.run_once("raises", lambda: 1 / 0, ttl=30)  # type: ignore[arg-type,return-value]
            assert (await c.claim("raises", 30)).state == "pending"
            with pytest.raises(llmctl.InvalidArgument, match="ttl = 0"):
                await c.claim("x", 0)

    asyncio.run(main())
    st = daemon.raw_status()
    assert st.duplicates_suppressed >= 4


def test_concurrent_async_run_once_runs_the_work_once(daemon: Daemon) -> None:
    async def main() -> List[Any]:
        async with llmctl.AsyncClient(daemon.socket, fail_mode="closed") as c:
            calls: List[int] = []

            async def work() -> bytes:
                calls.append(1)
                await asyncio.sleep(0.2)
                return b"once"

            got = await asyncio.gather(
                *(c.run_once("together", work) for _ in range(8)), return_exceptions=True
            )
            assert calls == [1]
            return got

    got = asyncio.run(main())
    assert got.count(b"once") == 1
    assert all(isinstance(g, llmctl.Pending) for g in got if g != b"once")


def test_complete_needs_a_claim_and_never_replaces_a_result(client: llmctl.Client) -> None:
    with pytest.raises(llmctl.ClaimRefused, match="Claim it before Complete"):
        client.complete("never-claimed", b"x")
    assert client.claim("once", 30).claimed
    client.complete("once", b"first")
    client.complete("once", b"first")  # the same again is harmless
    with pytest.raises(llmctl.ClaimRefused, match="already done with another result"):
        client.complete("once", b"second")
    assert client.claim("once", 30).result == b"first"


def test_over_max_claim_result_is_refused_by_the_daemon() -> None:
    d = Daemon("[daemon]\nmax_claim_result = 10\n")
    try:
        with llmctl.Client(d.socket, fail_mode="closed") as c:
            assert c.claim("small", 30).claimed
            with pytest.raises(llmctl.InvalidArgument, match="max_claim_result"):
                c.complete("small", b"x" * 11)
            c.complete("small", b"x" * 10)
    finally:
        d.close()


def test_after_the_store_lost_records_an_unknown_job_raises_until_accepted() -> None:
    d = Daemon()
    try:
        with llmctl.Client(d.socket, fail_mode="closed") as c:
            assert c.claim("before-the-loss", 300).claimed
            d.stop()
            # The store's file loses everything; the marker beside it remembers it had records.
            with open(Path(d.data) / "db", "r+b") as f:
                f.truncate(0)
            d.start()
            with pytest.raises(llmctl.ClaimHistoryLost, match="may have been done") as e:
                c.claim("before-the-loss", 300)
            assert e.value.code == "DATA_LOSS"
            assert c.claim("before-the-loss", 300, accept_lost_history=True).claimed
            assert d.raw_status().claims_lost_at_unix_ms > 0
    finally:
        d.close()
