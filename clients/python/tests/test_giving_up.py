"""Callers that give up (conformance/giving_up.json, the rows of the road "python"): each way of
giving up settles at once as the table says, leaves nothing held, and is never a refusal."""

from __future__ import annotations

import asyncio
import ctypes
import json
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

import llmctl

TABLE = json.loads((Path(__file__).resolve().parents[3] / "conformance" / "giving_up.json").read_text())
ROWS = [c for c in TABLE["cases"] if c["road"] == "python"]


def _queued(c: llmctl.Client, key: str) -> None:
    deadline = time.monotonic() + 5
    while c.key_status(key).queue_depth != 1:
        assert time.monotonic() < deadline, "the acquire never queued"
        time.sleep(0.02)


def cancel_task_while_waiting(socket: str, key: str) -> None:
    async def main() -> None:
        async with llmctl.AsyncClient(socket, fail_mode="closed") as c:
            held = await c.acquire(key)
            waiting = asyncio.ensure_future(c.acquire(key, max_wait=30))
            deadline = time.monotonic() + 5
            while (await c.key_status(key)).queue_depth != 1:
                assert time.monotonic() < deadline, "the acquire never queued"
                await asyncio.sleep(0.02)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            # Withdrawn (in the background) before the held lease frees the slot: else the
            # grant crosses the withdrawal and is given back, a lease withdrawn, not a wait.
            while (await c.key_status(key)).queue_depth != 0:
                assert time.monotonic() < deadline + 5, "the wait was never withdrawn"
                await asyncio.sleep(0.02)
            await held.report(200)

    asyncio.run(main())


def interrupt_while_waiting(socket: str, key: str) -> None:
    """What Ctrl-C raises in a script's thread waiting for its grant."""
    c = llmctl.Client(socket, fail_mode="closed")
    held = c.acquire(key)
    interrupted: List[BaseException] = []

    def wait() -> None:
        try:
            c.acquire(key, max_wait=30)
        except BaseException as e:
            interrupted.append(e)

    t = threading.Thread(target=wait)
    t.start()
    _queued(c, key)
    assert t.ident is not None
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.ident), ctypes.py_object(KeyboardInterrupt))
    t.join(10)
    assert interrupted and isinstance(interrupted[0], KeyboardInterrupt), interrupted
    held.report(200)
    c.close()


def cancel_inside_lease(socket: str, key: str) -> None:
    """A task cancelled while its request is out (inside ``async with``): reported cancelled."""

    async def main() -> None:
        async with llmctl.AsyncClient(socket, fail_mode="closed") as c:
            entered = asyncio.Event()

            async def work() -> None:
                async with c.acquire(key):
                    entered.set()
                    await asyncio.sleep(30)  # the request, out

            task = asyncio.ensure_future(work())
            await entered.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())


WAYS: Dict[str, Callable[[str, str], None]] = {
    "cancel_task_while_waiting": cancel_task_while_waiting,
    "interrupt_while_waiting": interrupt_while_waiting,
    "cancel_inside_lease": cancel_inside_lease,
}
# The leases each way holds and reports itself (so that an acquire waits behind one).
HELD = {"cancel_task_while_waiting": 1, "interrupt_while_waiting": 1, "cancel_inside_lease": 0}


@pytest.mark.parametrize("row", ROWS, ids=[r["way"] for r in ROWS])
def test_giving_up_settles_as_the_table_says(start_daemon: Any, row: Dict[str, Any]) -> None:
    key = f"py/gu/{row['way']}"
    d = start_daemon(f'[keys."{key}"]\nmax_concurrency = 1\n')
    assert row["way"] in WAYS, f"no runner for {row['way']}"
    WAYS[row["way"]](d.socket, key)
    held = HELD[row["way"]]
    want = {
        "withdrawn_wait": (1, held, 0),
        "given_back": (1, held, 1),
        "reported_cancelled": (1, held + 1, 0),
    }[row["settles"]]
    c = llmctl.Client(d.socket, fail_mode="closed")
    deadline = time.monotonic() + 5
    while True:
        k = c.key_status(key)
        got = (k.cancelled_total, k.settled_total, k.withdrawn_total)
        if got == want and k.in_flight == 0 and k.queue_depth == 0 and k.tokens_outstanding == 0:
            break
        assert time.monotonic() < deadline, f"{row['name']}: {got}, want {want} ({row['settles']})"
        time.sleep(0.02)
    assert k.rejected_total == 0 and k.rate_limited_total == 0, "a cancel is not a refusal"
    assert k.granted_total == k.settled_total + k.withdrawn_total
    c.close()
