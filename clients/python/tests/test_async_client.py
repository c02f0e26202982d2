"""The asyncio client against the real daemon: the same behaviour as coroutines."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import llmctl
from conftest import Daemon, wait_until


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_async_with_acquire_reports_the_usage(daemon: Daemon) -> None:
    async def main() -> llmctl.Advice:
        async with llmctl.AsyncClient(daemon.socket, fail_mode="closed") as c:
            async with c.acquire("openai/m", input_tokens=100, output_tokens=50) as lease:
                assert isinstance(lease, llmctl.AsyncLease) and lease.limited
                assert (await c.key_status("openai/m")).tokens_outstanding == 150
                return await lease.report(200, input_tokens=60, cached_input_tokens=10, output_tokens=5)

    assert run(main()).action == "done"
    k = daemon.key("openai/m")
    assert (k.tokens_used, k.tokens_outstanding, k.in_flight) == (65, 0, 0)


def test_an_awaited_lease_left_unreported_is_settled_at_the_estimate(daemon: Daemon) -> None:
    async def main() -> llmctl.AsyncLease:
        async with llmctl.AsyncClient(daemon.socket, fail_mode="closed") as c:
            lease = await c.acquire("k", input_tokens=7, output_tokens=3)
            async with lease:
                pass
            return lease

    lease = run(main())
    assert lease.reported and lease.advice is not None
    assert daemon.key("k").tokens_used == 10


def test_an_exception_leaving_async_with_is_reported(daemon: Daemon) -> None:
    class ProviderSaid529(Exception):
        status_code = 529
        body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    async def main() -> llmctl.AsyncLease:
        async with llmctl.AsyncClient(daemon.socket, fail_mode="closed") as c:
            with pytest.raises(ProviderSaid529):
                async with c.acquire("anthropic/m") as lease:
                    raise ProviderSaid529()
            return lease

    lease = run(main())
    assert lease.advice is not None and lease.advice.action == "retry"
    k = daemon.key("anthropic/m")
    assert k.rate_limited_total == 1 and k.cooldown_remaining_ms > 0


def test_async_not_granted_and_cooldown(daemon: Daemon) -> None:
    async def main() -> None:
        async with llmctl.AsyncClient(daemon.socket, fail_mode="closed") as c:
            until = await c.cooldown("k", 2, reason="testing")
            assert until is not None
            with pytest.raises(llmctl.NotGranted) as e:
                await c.acquire("k", max_wait=0)
            assert e.value.not_before is not None
            assert abs(e.value.not_before.timestamp() - until.timestamp()) < 0.05
            st = await c.status()
            assert any(k.key == "k" and k.cooldown_reason == "testing" for k in st.keys)
            await c.ping()

    run(main())


def test_async_bad_input_is_refused_at_once() -> None:
    c = llmctl.AsyncClient("/nonexistent/llmctl.sock")
    with pytest.raises(llmctl.InvalidArgument, match="key is empty"):
        c.acquire("")
    with pytest.raises(llmctl.InvalidArgument, match="output_tokens = -1 is negative"):
        c.acquire("k", output_tokens=-1)


def test_an_async_client_holds_a_session_until_closed(daemon: Daemon) -> None:
    before = daemon.sessions()

    async def main() -> None:
        c = llmctl.AsyncClient(daemon.socket)
        assert await c.wait_connected(5)
        assert daemon.sessions() == before + 1
        await c.aclose()

    run(main())
    wait_until(lambda: daemon.sessions() == before, 5, "the session to end")


def test_a_cancelled_acquire_leaves_the_queue(start_daemon: Any) -> None:
    d = start_daemon('[keys."k"]\nmax_concurrency = 1\n')

    async def main() -> None:
        async with llmctl.AsyncClient(d.socket, fail_mode="closed") as c:
            held = await c.acquire("k")
            waiting = asyncio.ensure_future(c.acquire("k", max_wait=30))
            deadline = time.monotonic() + 5
            while (await c.key_status("k")).queue_depth != 1:
                assert time.monotonic() < deadline, "the second acquire never queued"
                await asyncio.sleep(0.02)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            deadline = time.monotonic() + 5
            while (await c.key_status("k")).queue_depth != 0:
                assert time.monotonic() < deadline, "the cancelled acquire stayed queued"
                await asyncio.sleep(0.02)
            await held.report(200)
            assert (await c.key_status("k")).in_flight == 0

    run(main())


def test_tasks_cancelled_as_their_slot_frees_hold_nothing(start_daemon: Any) -> None:
    """4 rounds of 6 waiting tasks cancelled just as the slot they wait for frees (some granted
    as they go): every grant is given back, the key holds nothing, and the ledger balances."""
    d = start_daemon('[keys."k"]\nmax_concurrency = 1\n')

    async def main() -> None:
        async with llmctl.AsyncClient(d.socket, fail_mode="closed") as c:
            for round_ in range(4):
                held = await c.acquire("k")
                waiting = [asyncio.ensure_future(c.acquire("k", max_wait=30)) for _ in range(6)]
                deadline = time.monotonic() + 5
                while (await c.key_status("k")).queue_depth != 6:
                    assert time.monotonic() < deadline, "the acquires never queued"
                    await asyncio.sleep(0.02)
                await held.report(200)
                for w in waiting:
                    w.cancel()
                results = await asyncio.gather(*waiting, return_exceptions=True)
                for r in results:
                    if isinstance(r, llmctl.AsyncLease):
                        await r.report(200)  # a grant the task had already taken is its own
                deadline = time.monotonic() + 5
                while True:
                    k = await c.key_status("k")
                    if k.in_flight == 0 and k.queue_depth == 0:
                        break
                    assert time.monotonic() < deadline, f"round {round_}: {k.in_flight} held"
                    await asyncio.sleep(0.02)
            k = await c.key_status("k")
            assert k.granted_total == k.settled_total + k.withdrawn_total, k
            assert k.cancelled_total >= 4 * 5, k.cancelled_total
            assert k.rejected_total == 0, "a cancel is not a refusal"

    run(main())


def test_fail_closed_async_raises_unavailable(tmp_path: Any) -> None:
    async def main() -> None:
        c = llmctl.AsyncClient(str(tmp_path / "none.sock"), fail_mode="closed")
        with pytest.raises(llmctl.Unavailable, match="none.sock"):
            await c.acquire("k")
        with pytest.raises(llmctl.Unavailable):
            await c.status()
        await c.aclose()

    run(main())


def test_fail_open_async_proceeds_unlimited(tmp_path: Any) -> None:
    async def main() -> None:
        c = llmctl.AsyncClient(str(tmp_path / "none.sock"))
        async with c.acquire("k", input_tokens=5) as lease:
            assert not lease.limited
            advice = await lease.report(429, headers={"retry-after": "3"})
        assert advice.action == "retry" and advice.retry_after == 3.0
        await c.aclose()

    run(main())
