"""What the client does when the daemon is not there: fail open (calls proceed, one warning a
minute, reconnect when it is back) or fail closed (llmctl.Unavailable)."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any, List

import httpx2
import openai
import pytest

import llmctl
from conftest import Daemon, Provider, wait_until
from llmctl.httpx import AsyncLimitedTransport, LimitedTransport


def warnings_of(caplog: pytest.LogCaptureFixture) -> List[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "llmctl" and r.levelno == logging.WARNING]


def test_fail_open_without_a_daemon_proceeds_and_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="llmctl")
    socket = str(tmp_path / "nobody.sock")
    with llmctl.Client(socket) as c:
        leases = []
        deadline = time.monotonic() + 1.0  # long enough for several fresh attempts (backoff 0.25 s, 0.5 s)
        while time.monotonic() < deadline:
            started = time.monotonic()
            with c.acquire("openai/m", input_tokens=10, output_tokens=10) as lease:
                leases.append(lease)
                assert lease.report(200, input_tokens=9, output_tokens=3).action == "done"
            assert time.monotonic() - started < 0.5
            time.sleep(0.05)
    assert len(leases) > 10 and not any(lease.limited for lease in leases)
    warned = warnings_of(caplog)
    assert len(warned) == 1, [r.getMessage() for r in warned]
    assert socket in warned[0].getMessage() and "without limits" in warned[0].getMessage()


def test_fail_closed_raises_unavailable_naming_the_socket(tmp_path: Path) -> None:
    socket = str(tmp_path / "nobody.sock")
    with llmctl.Client(socket, fail_mode="closed") as c:
        with pytest.raises(llmctl.Unavailable) as e:
            c.acquire("k")
        assert socket in str(e.value) and "llmctl daemon" in str(e.value)
        assert isinstance(e.value, ConnectionError) and e.value.socket == socket
        with pytest.raises(llmctl.Unavailable):
            c.cooldown("k", 1)
        with pytest.raises(llmctl.Unavailable):
            c.status()


def test_a_report_to_a_daemon_that_went_away_is_kept_local_when_failing_open(start_daemon: Any) -> None:
    d: Daemon = start_daemon("")
    with llmctl.Client(d.socket) as c:
        lease = c.acquire("k")
        d.kill9()
        advice = lease.report(503)
        assert advice.action == "retry" and "without the llmctl daemon" in advice.reason
        d.start()
        # The lease died with the old daemon; the new one does not know it, and that is no error.
        assert c.wait_connected(10)
        wait_until(
            lambda: c.acquire("k", max_wait=1).limited, 10, "the client to use the daemon again", every=0.1
        )
        lease2 = c.acquire("k")
        d.kill9()
        d.start()
        assert lease2.report(200).action == "done"


def sdk_call(oa: openai.OpenAI) -> Any:
    return oa.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=8)


def test_daemon_killed_mid_run_calls_continue_and_limits_return_after_restart(
    start_daemon: Any, provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="llmctl")
    d: Daemon = start_daemon("")
    with llmctl.Client(d.socket) as c:
        transport = LimitedTransport(key="openai/m", client=c, max_wait=0.5)
        oa = openai.OpenAI(
            base_url=provider.url + "/v1",
            api_key="test",
            http_client=httpx2.Client(transport=transport),
            max_retries=0,
        )
        for _ in range(3):
            sdk_call(oa)
        assert d.key("openai/m").granted_total == 3
        assert c.wait_connected(5)

        d.kill9()
        for _ in range(5):
            assert sdk_call(oa).choices[0].message.content
        assert provider.stats()["responses"]["200"] == 8
        assert len(warnings_of(caplog)) == 1

        d.start()
        reconnected = time.monotonic()

        def limited_again() -> bool:
            sdk_call(oa)
            k = d.status().get("openai/m")
            return k is not None and k.granted_total >= 1

        wait_until(limited_again, 10, "the client to be limited by the restarted daemon", every=0.1)
        assert c.wait_connected(5), "the session was not reopened"
        print(f"limited again {1000 * (time.monotonic() - reconnected):.0f} ms after the restart")

        # Limited again: a cooldown set by another process now stops this one's calls.
        out = d.cli("cooldown", "openai/m", "30s", "--reason", "test")
        assert out.returncode == 0, out.stderr
        before = provider.stats()["requests"]
        with pytest.raises(Exception) as e:
            sdk_call(oa)
        # The SDK lets it through, or wraps it in its APIConnectionError, as versions differ.
        assert isinstance(e.value, llmctl.NotGranted) or isinstance(e.value.__cause__, llmctl.NotGranted), (
            repr(e.value)
        )
        assert provider.stats()["requests"] == before
        assert len(warnings_of(caplog)) == 1


def test_an_async_client_reconnects_after_a_restart(start_daemon: Any, provider: Provider) -> None:
    d: Daemon = start_daemon("")

    async def main() -> None:
        async with llmctl.AsyncClient(d.socket) as c:
            oa = openai.AsyncOpenAI(
                base_url=provider.url + "/v1",
                api_key="test",
                http_client=httpx2.AsyncClient(transport=AsyncLimitedTransport(key="openai/a", client=c)),
                max_retries=0,
            )
            msgs = [{"role": "user", "content": "hi"}]
            await oa.chat.completions.create(model="m", messages=msgs, max_tokens=4)
            d.kill9()
            r = await oa.chat.completions.create(model="m", messages=msgs, max_tokens=4)
            assert r.usage is not None
            d.start()
            deadline = time.monotonic() + 10
            while True:
                await oa.chat.completions.create(model="m", messages=msgs, max_tokens=4)
                k = (await c.key_status("openai/a")) if not c._health.down else None
                if k is not None and k.granted_total >= 1:
                    break
                assert time.monotonic() < deadline, "never limited again"
                await asyncio.sleep(0.1)
            assert await c.wait_connected(5)

    asyncio.run(main())


def test_a_call_queued_while_the_daemon_stops_proceeds_when_failing_open(start_daemon: Any) -> None:
    """A stopping daemon is an unreachable one: a call waiting in its queue proceeds (fail open)
    instead of raising NotGranted "the daemon is stopping"; failing closed, it is refused."""
    import threading

    d: Daemon = start_daemon("")
    results: List[Any] = []
    with llmctl.Client(d.socket) as open_, llmctl.Client(d.socket, fail_mode="closed") as closed:
        # Nothing is granted on k for 30 s: both calls wait in the daemon.
        assert d.cli("cooldown", "k", "30s").returncode == 0

        def wait(c: llmctl.Client) -> None:
            try:
                results.append(c.acquire("k", max_wait=60))
            except llmctl.NotGranted as e:
                results.append(e)

        threads = [threading.Thread(target=wait, args=(c,)) for c in (open_, closed)]
        for t in threads:
            t.start()
        wait_until(lambda: d.key("k").queue_depth == 2, 10, "both calls to wait in the daemon")
        d.stop()
        for t in threads:
            t.join(10)
    kinds = sorted(type(r).__name__ for r in results)
    assert kinds == ["Lease", "NotGranted"], results
    lease = next(r for r in results if isinstance(r, llmctl.Lease))
    assert not lease.limited
    refused = next(r for r in results if isinstance(r, llmctl.NotGranted))
    assert refused.reason_code == "stopping"


def test_the_transport_takes_a_socket_and_the_client_says_whether_calls_were_limited(
    start_daemon: Any, start_provider: Any, tmp_path: Path
) -> None:
    d: Daemon = start_daemon("")
    provider = start_provider("--rpm", "100000")
    transport = LimitedTransport(key="openai/{model}", socket=d.socket)
    oa = openai.OpenAI(
        base_url=provider.url + "/v1",
        api_key="t",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )
    assert transport.client.limited is None
    sdk_call(oa)
    assert transport.client.limited is True and transport.client.socket == d.socket
    # A socket where no daemon runs: the call goes, unlimited, and the client says so.
    lost = LimitedTransport(key="openai/{model}", socket=str(tmp_path / "nobody.sock"))
    oa2 = openai.OpenAI(
        base_url=provider.url + "/v1", api_key="t", http_client=httpx2.Client(transport=lost), max_retries=0
    )
    sdk_call(oa2)
    assert lost.client.limited is False
    with llmctl.Client(d.socket) as c, pytest.raises(TypeError):
        LimitedTransport(key="k", socket=d.socket, client=c)
