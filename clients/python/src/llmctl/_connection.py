"""How a client reaches the daemon: a gRPC channel on its Unix socket, and the Session stream the
client holds open so that the daemon frees the process's concurrency slots when it dies.

This is what the two clients do differently, so each has its own: `Connection` serves `Client`,
with a thread, and `AsyncConnection` serves `AsyncClient`, with a task of its event loop. Both
offer the same methods (coroutines in `AsyncConnection` where they wait), which is what lets
`_client.py` be generated from `_aio.py`.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import TYPE_CHECKING, Any, Optional

import grpc
import grpc.aio

from ._common import CHANNEL_OPTIONS
from .v1 import limiter_pb2 as pb
from .v1 import limiter_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    from ._aio import AsyncClient
    from ._client import Client


class Connection:
    """`Client`'s channel, opened at once, and the thread that keeps its Session open."""

    def __init__(self, client: Client) -> None:
        self._channel = grpc.insecure_channel("unix://" + client.socket, options=CHANNEL_OPTIONS)
        self._stub = pb_grpc.LimiterStub(self._channel)
        self._session = _SessionKeeper(client, self._stub)

    def stub(self) -> Any:
        return self._stub

    @property
    def connected(self) -> bool:
        return self._session.open.is_set()

    def wait_connected(self, timeout: Optional[float]) -> bool:
        return self._session.open.wait(timeout)

    def ready(self, timeout: float) -> bool:
        """Whether the channel is (or becomes, within ``timeout``) connected."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
            return True
        except grpc.FutureTimeoutError:
            return False

    def acquire(
        self, req: pb.AcquireRequest, timeout: float, wait_for_ready: bool = False
    ) -> pb.AcquireResponse:
        """Acquire as a future, so that a caller interrupted while it waits (Ctrl-C, say) takes
        the waiter out of the daemon's queue (Withdraw by its acquire id) and gives back a
        grant that arrives as it leaves: nothing is held past the interruption."""
        if not req.acquire_id:
            req.acquire_id = new_acquire_id()
        future = self._stub.Acquire.future(req, timeout=timeout, wait_for_ready=wait_for_ready)
        try:
            resp: pb.AcquireResponse = future.result()
        except grpc.RpcError:
            raise
        except BaseException:
            self._withdraw(future, req.acquire_id)
            raise
        return resp

    def _withdraw(self, future: Any, acquire_id: str) -> None:
        """The wait is withdrawn; its call then answers at once, and a grant it brings goes back."""
        try:
            self._stub.Withdraw(pb.WithdrawRequest(acquire_id=acquire_id), timeout=WITHDRAW_TIMEOUT)
            resp = future.result(timeout=WITHDRAW_TIMEOUT)
            if resp.granted:
                self._stub.Withdraw(pb.WithdrawRequest(lease_id=resp.lease_id), timeout=WITHDRAW_TIMEOUT)
        except BaseException:  # the daemon away, or a second interruption: the call is cut
            future.cancel()

    def close(self) -> None:
        self._session.close()
        self._channel.close()


WITHDRAW_TIMEOUT = 5.0
"""The longest giving back an abandoned wait or grant may take."""

_WITHDRAWING: "set[asyncio.Task[None]]" = set()
"""Withdrawals under way (held so that they finish)."""


def new_acquire_id() -> str:
    """A fresh id for one Acquire (what Withdraw names)."""
    return os.urandom(16).hex()


async def _withdraw(stub: Any, call: Any, answer: "asyncio.Future[Any]", acquire_id: str) -> None:
    """Withdraws an abandoned wait, and gives back the grant its call brings, if any."""
    try:
        await stub.Withdraw(pb.WithdrawRequest(acquire_id=acquire_id), timeout=WITHDRAW_TIMEOUT)
        resp = await asyncio.wait_for(answer, WITHDRAW_TIMEOUT)
        if resp.granted:
            await stub.Withdraw(pb.WithdrawRequest(lease_id=resp.lease_id), timeout=WITHDRAW_TIMEOUT)
    except (Exception, asyncio.CancelledError):  # the daemon away: the call is cut
        call.cancel()


class _SessionKeeper:
    """Holds the client's Session stream open in a thread, reopening it whenever it breaks, so
    the daemon frees this process's concurrency slots when the process dies."""

    def __init__(self, client: Client, stub: Any) -> None:
        self._client = client
        self._stub = stub
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._call: Any = None
        self.open = threading.Event()
        self._thread = threading.Thread(target=self._run, name="llmctl-session", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        c = self._client
        backoff = 0.1
        while not self._stop.is_set():
            call = self._stub.Session(
                pb.SessionRequest(client_id=c.client_id, pid=os.getpid()), wait_for_ready=True
            )
            with self._lock:
                if self._stop.is_set():
                    call.cancel()
                    return
                self._call = call
            try:
                for _ in call:
                    self.open.set()
                    backoff = 0.1
            except grpc.RpcError:
                pass
            except ValueError:  # the channel was closed under us
                return
            if self.open.is_set():
                self.open.clear()
                c._health.session_lost()
            self._stop.wait(backoff)
            backoff = min(backoff * 2, 1.0)

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()
        self._thread.join(timeout=2)


class AsyncConnection:
    """`AsyncClient`'s channel and the task that keeps its Session open. Both belong to an event
    loop, so they are made on first use in the running loop, and made again in a new one."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._channel: Optional[grpc.aio.Channel] = None
        self._stub: Any = None
        self._session_task: Optional[asyncio.Task[None]] = None
        self._session_open: Optional[asyncio.Event] = None

    def stub(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # First use, or a new event loop: a gRPC channel belongs to the loop it runs in.
            if self._session_task is not None and not self._session_task.done():
                try:
                    self._session_task.cancel()
                except RuntimeError:
                    pass
            self._loop = loop
            self._channel = grpc.aio.insecure_channel(
                "unix://" + self._client.socket, options=CHANNEL_OPTIONS
            )
            self._stub = pb_grpc.LimiterStub(self._channel)
            self._session_open = asyncio.Event()
            self._session_task = loop.create_task(self._keep_session(self._stub, self._session_open))
        return self._stub

    async def _keep_session(self, stub: Any, opened: asyncio.Event) -> None:
        """Holds the Session stream open, reopening it whenever it breaks."""
        c = self._client
        backoff = 0.1
        while True:
            call = stub.Session(
                pb.SessionRequest(client_id=c.client_id, pid=os.getpid()), wait_for_ready=True
            )
            try:
                async for _ in call:
                    opened.set()
                    backoff = 0.1
            except asyncio.CancelledError:
                call.cancel()
                raise
            except grpc.RpcError:
                pass
            if opened.is_set():
                opened.clear()
                c._health.session_lost()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 1.0)

    @property
    def connected(self) -> bool:
        return self._session_open is not None and self._session_open.is_set()

    async def wait_connected(self, timeout: Optional[float]) -> bool:
        opened = self._session_open
        assert opened is not None, "stub() starts the session"
        try:
            await asyncio.wait_for(opened.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    async def ready(self, timeout: float) -> bool:
        """Whether the channel is (or becomes, within ``timeout``) connected."""
        channel = self._channel
        if channel is None:
            return False
        try:
            await asyncio.wait_for(channel.channel_ready(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    async def acquire(
        self, req: pb.AcquireRequest, timeout: float, wait_for_ready: bool = False
    ) -> pb.AcquireResponse:
        """A task cancelled while it waits takes the waiter out of the daemon's queue (Withdraw
        by its acquire id) and gives back a grant that arrives as it leaves, in a task of its
        own: nothing is held past the cancellation."""
        if not req.acquire_id:
            req.acquire_id = new_acquire_id()
        stub = self._stub
        call = stub.Acquire(req, timeout=timeout, wait_for_ready=wait_for_ready)
        answer: asyncio.Future[pb.AcquireResponse] = asyncio.ensure_future(call)
        try:
            resp: pb.AcquireResponse = await asyncio.shield(answer)
        except asyncio.CancelledError:
            withdrawal = _withdraw(stub, call, answer, req.acquire_id)
            task = asyncio.get_running_loop().create_task(withdrawal)
            _WITHDRAWING.add(task)
            task.add_done_callback(_WITHDRAWING.discard)
            raise
        return resp

    async def aclose(self) -> None:
        task, channel = self._session_task, self._channel
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        if channel is not None:
            await channel.close()
