"""The synchronous client against the real daemon: leases, reports, waiting, cooldowns, sessions."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import httpx
import pytest

import llmctl
from conftest import Daemon, wait_until


def test_a_report_settles_the_lease_with_the_real_usage(daemon: Daemon, client: llmctl.Client) -> None:
    lease = client.acquire("openai/gpt-test", input_tokens=100, output_tokens=50)
    assert lease.limited and lease.lease_id and lease.key == "openai/gpt-test"
    assert lease.expires is not None and lease.expires.timestamp() > time.time()
    assert daemon.key("openai/gpt-test").tokens_outstanding == 150
    advice = lease.report(200, input_tokens=80, cached_input_tokens=30, output_tokens=20)
    assert advice == llmctl.Advice("done", 0.0, None, "")
    k = daemon.key("openai/gpt-test")
    assert (k.tokens_used, k.tokens_outstanding, k.in_flight) == (100, 0, 0)
    assert lease.reported and lease.advice == advice


def test_a_success_without_usage_is_settled_at_the_estimate(daemon: Daemon, client: llmctl.Client) -> None:
    lease = client.acquire("k", input_tokens=70, output_tokens=30)
    lease.report(200)
    assert daemon.key("k").tokens_used == 100


def test_leaving_the_block_unreported_settles_at_the_estimate(daemon: Daemon, client: llmctl.Client) -> None:
    with client.acquire("k", input_tokens=40, output_tokens=2) as lease:
        assert daemon.key("k").in_flight == 1
    assert lease.reported and lease.advice is not None
    k = daemon.key("k")
    assert (k.in_flight, k.tokens_outstanding, k.tokens_used) == (0, 0, 42)


def test_an_exception_leaving_the_block_is_reported_with_its_status_and_headers(
    daemon: Daemon, client: llmctl.Client
) -> None:
    request = httpx.Request("POST", "https://api.example/v1/chat/completions")
    response = httpx.Response(
        429, headers={"retry-after": "7"}, json={"error": {"code": "rate_limit_exceeded"}}, request=request
    )
    with pytest.raises(httpx.HTTPStatusError):
        with client.acquire("openai/m") as lease:
            response.raise_for_status()
    assert lease.advice is not None and lease.advice.action == "retry"
    assert lease.advice.retry_after >= 6.5
    k = daemon.key("openai/m")
    assert k.rate_limited_total == 1
    assert 6000 <= k.cooldown_remaining_ms <= 7000


def test_an_exception_without_a_status_is_reported_as_no_answer(
    daemon: Daemon, client: llmctl.Client
) -> None:
    with pytest.raises(TimeoutError):
        with client.acquire("k", input_tokens=10, output_tokens=5) as lease:
            raise TimeoutError("the provider did not answer")
    assert lease.advice is not None and lease.advice.action == "retry"
    k = daemon.key("k")
    # No answer: the provider may have done the work, so the estimate stays charged.
    assert (k.in_flight, k.tokens_used, k.rate_limited_total) == (0, 15, 0)


def test_not_granted_carries_not_before_and_the_reason(daemon: Daemon, client: llmctl.Client) -> None:
    until = client.cooldown("anthropic/opus", 3, reason="maintenance")
    assert until is not None and 2.5 < until.timestamp() - time.time() <= 3.1
    started = time.monotonic()
    with pytest.raises(llmctl.NotGranted) as e:
        client.acquire("anthropic/opus", max_wait=0.5)
    assert time.monotonic() - started < 0.4, "a cooldown longer than max_wait is answered at once"
    assert e.value.not_before is not None
    assert abs(e.value.not_before.timestamp() - until.timestamp()) < 0.05
    assert e.value.key == "anthropic/opus" and "cool" in e.value.reason
    assert e.value.reason_code == "cooldown"
    assert e.value.retry_after is not None and 2 < e.value.retry_after <= 3.1
    assert "anthropic/opus" in str(e.value)
    k = daemon.key("anthropic/opus")
    assert k.cooldown_reason == "maintenance" and k.cooldown_remaining_ms > 2000


def test_acquire_waits_in_the_daemon_until_capacity_returns(start_daemon: Any) -> None:
    d = start_daemon('[keys."k"]\nmax_concurrency = 1\n')
    with llmctl.Client(d.socket, fail_mode="closed") as c:
        first = c.acquire("k")
        with pytest.raises(llmctl.NotGranted):
            c.acquire("k", max_wait=0)
        got: list = []
        t = threading.Thread(target=lambda: got.append(c.acquire("k", max_wait=10)))
        t.start()
        wait_until(lambda: d.key("k").queue_depth == 1, 5, "the second acquire to queue")
        first.report(200)
        t.join(10)
        assert got and got[0].limited and got[0].waited > 0
        got[0].report(200)


def test_status_lists_keys_and_sessions(daemon: Daemon, client: llmctl.Client) -> None:
    assert client.wait_connected(5)
    with client.acquire("openai/a/b"):
        pass
    st = client.status()
    assert st.socket == daemon.socket and st.sessions >= 1
    k = client.key_status("openai/a/b")
    assert k is not None and k.granted_total == 1
    assert client.key_status("nobody") is None
    client.ping()


def test_each_client_holds_its_own_session(daemon: Daemon) -> None:
    before = daemon.sessions()
    a = llmctl.Client(daemon.socket)
    b = llmctl.Client(daemon.socket)
    try:
        assert a.client_id != b.client_id
        assert a.wait_connected(5) and b.wait_connected(5)
        assert daemon.sessions() == before + 2
    finally:
        a.close()
        b.close()
    wait_until(lambda: daemon.sessions() == before, 5, "the closed sessions to end")


HOLDER = """
import sys, time, llmctl
c = llmctl.Client(sys.argv[1], fail_mode="closed")
assert c.wait_connected(10)
lease = c.acquire("k")
print("held", lease.lease_id, flush=True)
time.sleep(120)
"""


def test_a_killed_process_gives_its_slot_back(start_daemon: Any) -> None:
    d = start_daemon('[keys."k"]\nmax_concurrency = 1\n')
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, d.socket], stdout=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().startswith("held ")
        with llmctl.Client(d.socket, fail_mode="closed") as c:
            with pytest.raises(llmctl.NotGranted):
                c.acquire("k", max_wait=0)
            holder.kill()
            holder.wait(10)
            killed = time.monotonic()
            wait_until(lambda: d.key("k").in_flight == 0, 5, "the dead client's slot to come back")
            print(f"slot back {1000 * (time.monotonic() - killed):.0f} ms after kill -9")
            c.acquire("k", max_wait=0).report(200)
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(10)
        if holder.stdout:
            holder.stdout.close()


def test_a_second_report_is_refused(client: llmctl.Client) -> None:
    lease = client.acquire("k")
    lease.report(200)
    with pytest.raises(llmctl.LeaseNotFound, match="already reported"):
        lease.report(200)


def test_a_lease_settled_elsewhere_is_unknown_to_the_daemon(daemon: Daemon, client: llmctl.Client) -> None:
    lease = client.acquire("k")
    out = daemon.cli("report", lease.lease_id, "--status", "200")
    assert out.returncode == 0, out.stderr
    with pytest.raises(llmctl.LeaseNotFound) as e:
        lease.report(200)
    assert e.value.code == "NOT_FOUND" and lease.lease_id in e.value.message


def test_closing_the_client_refuses_further_calls(daemon: Daemon) -> None:
    c = llmctl.Client(daemon.socket)
    c.close()
    with pytest.raises(llmctl.LlmctlError, match="closed"):
        c.acquire("k")
    # Waiting for a session that can never open is refused too, not a wait until the timeout
    # (or forever, without one).
    with pytest.raises(llmctl.LlmctlError, match="closed"):
        c.wait_connected(1)


def test_the_default_socket_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert llmctl.default_socket({"LLMCTL_SOCKET": "/x/y.sock", "XDG_RUNTIME_DIR": "/run/u"}) == "/x/y.sock"
    assert llmctl.default_socket({"XDG_RUNTIME_DIR": "/run/user/7"}) == "/run/user/7/llmctl/llmctl.sock"
    assert llmctl.default_socket({}) == f"/tmp/llmctl-{os.getuid()}/llmctl.sock"
    monkeypatch.setenv("LLMCTL_SOCKET", "/somewhere/else.sock")
    with llmctl.Client() as c:
        assert c.socket == "/somewhere/else.sock"


FORKER = """
import os, sys, time, llmctl
c = llmctl.Client(sys.argv[1], fail_mode="closed")
assert c.wait_connected(10)
held = c.acquire("k")
parent_id = c.client_id
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    lease = c.acquire("k", max_wait=5)  # the parent's client, used in the child
    assert c.wait_connected(10)
    os.write(w, (c.client_id + "\\n").encode())
    time.sleep(120)
    os._exit(0)
os.close(w)
child_id = os.fdopen(r).readline().strip()
print(parent_id, child_id, pid, flush=True)
time.sleep(120)
"""


def test_a_forked_child_gets_its_own_session(start_daemon: Any) -> None:
    d = start_daemon('[keys."k"]\nmax_concurrency = 2\n')
    env = {**os.environ, "GRPC_ENABLE_FORK_SUPPORT": "1"}
    parent = subprocess.Popen(
        [sys.executable, "-c", FORKER, d.socket],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    child_pid = 0
    try:
        assert parent.stdout is not None
        parent_id, child_id, pid = parent.stdout.readline().split()
        child_pid = int(pid)
        assert parent_id != child_id
        assert d.key("k").in_flight == 2 and d.sessions() == 2
        os.kill(child_pid, signal.SIGKILL)
        wait_until(lambda: d.key("k").in_flight == 1, 5, "the child's slot to come back")
        assert d.sessions() == 1, "the parent's session must outlive the child's"
    finally:
        if child_pid:
            try:
                os.kill(child_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        parent.kill()
        parent.wait(10)
        if parent.stdout:
            parent.stdout.close()
