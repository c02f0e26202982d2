"""The asyncio client: `AsyncClient` and its `AsyncLease`."""

from __future__ import annotations

import asyncio
import datetime as _dt
import inspect
import os
from types import TracebackType
from typing import Any, Awaitable, Callable, Generator, Mapping, Optional, Type, Union

import grpc
import grpc.aio

from . import _errors as errors
from ._claims import (
    DEFAULT_RUN_ONCE_TTL,
    BytesLike,
    ClaimResult,
    claim_request,
    claim_result,
    complete_request,
    result_bytes,
)
from ._common import (
    CALL_TIMEOUT,
    CHANNEL_OPTIONS,
    Advice,
    Health,
    Outcome,
    Seconds,
    acquire_request,
    advice_from,
    check_client_id,
    check_fail_mode,
    check_key,
    first_attempt_ms,
    from_unix_ms,
    is_unreachable,
    local_advice,
    logger,
    new_client_id,
    not_granted,
    rpc_error,
    run_budget_request,
    seconds,
    socket_path,
)
from ._lease import LeaseBase
from .v1 import limiter_pb2 as pb
from .v1 import limiter_pb2_grpc as pb_grpc


class AsyncLease(LeaseBase):
    """`Lease` for asyncio: the same fields; ``report`` and ``report_response`` are coroutines,
    and ``async with`` reports the exception (or an unknown outcome) of a block left unreported."""

    def __init__(self, client: "AsyncClient", **kw: Any) -> None:
        super().__init__(**kw)
        self._client = client

    async def report(
        self,
        status: int,
        headers: Optional[Mapping[str, str]] = None,
        input_tokens: Optional[int] = None,
        cached_input_tokens: Optional[int] = None,
        output_tokens: Optional[int] = None,
        error_type: Optional[str] = None,
        *,
        error_message: Optional[str] = None,
        stream_started: bool = False,
        attempt: Optional[int] = None,
        usage_known: Optional[bool] = None,
        first_attempt: Union[_dt.datetime, float, None] = None,
    ) -> Advice:
        outcome = self._outcome(
            status,
            headers,
            input_tokens,
            cached_input_tokens,
            output_tokens,
            error_type,
            error_message,
            stream_started,
            usage_known,
        )
        return await self._send(outcome, attempt, first_attempt)

    async def report_response(self, obj: Any, *, stream_started: Optional[bool] = None) -> Advice:
        return await self._send(self._outcome_of(obj, stream_started), None, None)

    async def report_exception(self, exc: BaseException) -> Advice:
        return await self._send(self._outcome_of(exc, None), None, None)

    async def report_outcome(self, outcome: Outcome) -> Advice:
        return await self._send(outcome, None, None)

    async def _send(self, outcome: Outcome, attempt: Optional[int], first_attempt: Any) -> Advice:
        req = self._report_request(outcome, attempt, first_attempt)
        self._claim_report()
        try:
            self.advice = await self._client._report(self, req, outcome)
        except errors.LeaseNotFound:
            raise
        except BaseException:
            self._unclaim()
            raise
        return self.advice

    async def __aenter__(self) -> "AsyncLease":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if self._reported:
            return
        try:
            await self._send(self._exit_outcome(exc), None, None)
        except errors.LlmctlError as e:
            logger.warning("llmctl: could not report lease %s on %r: %s", self.lease_id, self.key, e)
        except asyncio.CancelledError:
            # Cancelled while reporting: the lease expires at its estimate.
            if exc is None:
                raise


class PendingLease:
    """What `AsyncClient.acquire` returns: await it for the `AsyncLease`, or use it directly
    in ``async with``."""

    def __init__(self, factory: Callable[[], Awaitable[AsyncLease]]) -> None:
        self._factory = factory
        self._lease: Optional[AsyncLease] = None

    def __await__(self) -> Generator[Any, None, AsyncLease]:
        return self._factory().__await__()

    async def __aenter__(self) -> AsyncLease:
        self._lease = await self._factory()
        return self._lease

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if self._lease is not None:
            await self._lease.__aexit__(exc_type, exc, tb)


class AsyncClient:
    """`Client` for asyncio, with the same arguments and methods as coroutines. The connection
    and the session task start on first use in a running event loop."""

    def __init__(
        self,
        socket: Union[str, "os.PathLike[str]", None] = None,
        client_id: Optional[str] = None,
        fail_mode: str = "open",
    ) -> None:
        self.fail_mode = check_fail_mode(fail_mode)
        self.socket = socket_path(socket)
        self.client_id = check_client_id(client_id) if client_id is not None else new_client_id()
        self._own_id = client_id is None
        self._pid = os.getpid()
        self._health = Health(self.socket, self.fail_mode)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._channel: Optional[grpc.aio.Channel] = None
        self._stub: Any = None
        self._session_task: Optional["asyncio.Task[None]"] = None
        self._session_open: Optional[asyncio.Event] = None
        self._closed = False

    def __repr__(self) -> str:
        return f"<llmctl.AsyncClient {self.socket} client_id={self.client_id!r} fail_mode={self.fail_mode!r}>"

    def _ensure(self) -> Any:
        if self._closed:
            raise errors.LlmctlError("this llmctl.AsyncClient is closed; create a new one")
        loop = asyncio.get_running_loop()
        if os.getpid() != self._pid:
            # A forked child gets a session of its own (gRPC needs GRPC_ENABLE_FORK_SUPPORT=1).
            self._pid = os.getpid()
            if self._own_id:
                self.client_id = new_client_id()
            self._health = Health(self.socket, self.fail_mode)
            self._loop = None
            self._session_task = None
        if self._loop is not loop:
            # First use, or a new event loop: a gRPC channel belongs to the loop it runs in.
            if self._session_task is not None and not self._session_task.done():
                try:
                    self._session_task.cancel()
                except RuntimeError:
                    pass
            self._loop = loop
            self._channel = grpc.aio.insecure_channel("unix://" + self.socket, options=CHANNEL_OPTIONS)
            self._stub = pb_grpc.LimiterStub(self._channel)
            self._session_open = asyncio.Event()
            self._session_task = loop.create_task(self._keep_session())
        return self._stub

    async def _keep_session(self) -> None:
        """Holds the Session stream open, reopening it whenever it breaks."""
        backoff = 0.1
        opened = self._session_open
        assert opened is not None
        while True:
            call = self._stub.Session(
                pb.SessionRequest(client_id=self.client_id, pid=os.getpid()), wait_for_ready=True
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
                self._health.session_lost()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 1.0)

    @property
    def connected(self) -> bool:
        return self._session_open is not None and self._session_open.is_set()

    async def wait_connected(self, timeout: Optional[float] = None) -> bool:
        self._ensure()
        assert self._session_open is not None
        try:
            await asyncio.wait_for(self._session_open.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    def acquire(
        self,
        key: Optional[str] = None,
        *,
        requests: int = 1,
        input_tokens: int = 0,
        output_tokens: int = 0,
        priority: int = 0,
        max_wait: Optional[Seconds] = None,
        run_id: Optional[str] = None,
        route_group: Optional[str] = None,
        attempt: int = 1,
        profile: Optional[str] = None,
        first_attempt: Union[_dt.datetime, float, None] = None,
    ) -> PendingLease:
        """`Client.acquire` for asyncio: ``lease = await client.acquire(...)`` or
        ``async with client.acquire(...) as lease:``. Input is checked at once."""
        first_ms = first_attempt_ms(first_attempt)
        req, wait = acquire_request(
            key,
            requests=requests,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            priority=priority,
            max_wait=max_wait,
            run_id=run_id,
            route_group=route_group,
            client_id=self.client_id,
            profile=profile,
        )
        return PendingLease(lambda: self._acquire(req, wait, attempt, first_ms))

    async def _acquire(self, req: pb.AcquireRequest, wait: float, attempt: int, first_ms: int) -> AsyncLease:
        stub = self._ensure()
        if not self._health.should_try():
            return self._unlimited(req, attempt, first_ms)
        epoch = self._health.epoch
        try:
            resp = await stub.Acquire(req, timeout=wait + CALL_TIMEOUT)
        except grpc.RpcError as e:
            if is_unreachable(e) and self._health.fail_open:
                self._health.failed(e.details() or e.code().name)
                return self._unlimited(req, attempt, first_ms)
            raise rpc_error(e, self.socket, "acquire") from None
        self._health.ok()
        if not resp.granted:
            raise not_granted(resp, req)
        return AsyncLease(
            self,
            key=resp.key or req.key,
            lease_id=resp.lease_id,
            input_tokens=req.input_tokens,
            output_tokens=req.output_tokens,
            attempt=attempt,
            waited=resp.waited_ms / 1000.0,
            expires=from_unix_ms(resp.expires_unix_ms),
            epoch=epoch,
            first_attempt_ms=first_ms,
        )

    def _unlimited(self, req: pb.AcquireRequest, attempt: int, first_ms: int) -> AsyncLease:
        return AsyncLease(
            self,
            key=req.key,
            lease_id="",
            input_tokens=req.input_tokens,
            output_tokens=req.output_tokens,
            attempt=attempt,
            limited=False,
            first_attempt_ms=first_ms,
        )

    async def _report(self, lease: AsyncLease, req: pb.ReportRequest, outcome: Outcome) -> Advice:
        if not lease.limited:
            return local_advice(outcome)
        stub = self._ensure()
        try:
            resp = await stub.Report(req, timeout=CALL_TIMEOUT)
        except grpc.RpcError as e:
            if is_unreachable(e) and self._health.fail_open:
                self._health.failed(e.details() or e.code().name)
                return local_advice(outcome)
            err = rpc_error(e, self.socket, "report")
            if (
                isinstance(err, errors.LeaseNotFound)
                and self._health.fail_open
                and lease._epoch != self._health.epoch
            ):
                logger.info("llmctl: lease %s was lost when the daemon restarted", lease.lease_id)
                return local_advice(outcome)
            raise err from None
        self._health.ok()
        return advice_from(resp)

    async def cooldown(self, key: str, seconds_: Seconds, reason: str = "") -> Optional[_dt.datetime]:
        check_key(key)
        dur = seconds("seconds", seconds_, 0.0, 86400.0)
        if dur <= 0:
            raise errors.InvalidArgument(f"cooldown of {dur} s on {key!r}: give a positive duration")
        stub = self._ensure()
        req = pb.CooldownRequest(key=key, duration_ms=max(1, int(round(dur * 1000))), reason=reason or "")
        try:
            resp = await stub.Cooldown(req, timeout=CALL_TIMEOUT)
        except grpc.RpcError as e:
            if is_unreachable(e) and self._health.fail_open:
                self._health.failed(e.details() or e.code().name)
                return None
            raise rpc_error(e, self.socket, "cooldown") from None
        self._health.ok()
        return from_unix_ms(resp.until_unix_ms)

    async def set_run_budget(
        self,
        run_id: str,
        *,
        max_calls: Optional[int] = None,
        max_retries: Optional[int] = None,
        max_wall_time: Optional[Seconds] = None,
    ) -> bool:
        """`Client.set_run_budget` for asyncio."""
        req = run_budget_request(run_id, max_calls, max_retries, max_wall_time)
        stub = self._ensure()
        try:
            await stub.SetRunBudget(req, timeout=CALL_TIMEOUT)
        except grpc.RpcError as e:
            if is_unreachable(e) and self._health.fail_open:
                self._health.failed(e.details() or e.code().name)
                return False
            raise rpc_error(e, self.socket, "set_run_budget") from None
        self._health.ok()
        return True

    async def claim(self, key: str, ttl: Seconds, *, accept_lost_history: bool = False) -> ClaimResult:
        """`Client.claim` for asyncio."""
        req = claim_request(key, ttl, accept_lost_history)
        stub = self._ensure()
        try:
            resp = await stub.Claim(req, timeout=CALL_TIMEOUT, wait_for_ready=True)
        except grpc.RpcError as e:
            raise rpc_error(e, self.socket, "claim") from None
        self._health.ok()
        return claim_result(key, resp)

    async def complete(self, key: str, result: BytesLike) -> None:
        """`Client.complete` for asyncio."""
        req = complete_request(key, result)
        stub = self._ensure()
        try:
            await stub.Complete(req, timeout=CALL_TIMEOUT, wait_for_ready=True)
        except grpc.RpcError as e:
            raise rpc_error(e, self.socket, "complete") from None
        self._health.ok()

    async def run_once(
        self,
        key: str,
        fn: Callable[[], Union[bytes, Awaitable[bytes]]],
        *,
        ttl: Seconds = DEFAULT_RUN_ONCE_TTL,
    ) -> bytes:
        """`Client.run_once` for asyncio: ``fn`` may be a coroutine function (it is awaited) or
        a plain function returning bytes."""
        claimed = await self.claim(key, ttl)
        if claimed.state == "done":
            assert claimed.result is not None
            return claimed.result
        if claimed.state == "pending":
            raise errors.Pending(key, claimed.since)
        value = fn()
        if inspect.isawaitable(value):
            value = await value
        data = result_bytes(key, value, "fn's result")
        await self.complete(key, data)
        return data

    async def status(self, key_prefix: str = "") -> pb.StatusResponse:
        """`Client.status` for asyncio."""
        stub = self._ensure()
        try:
            resp = await stub.Status(pb.StatusRequest(key_prefix=key_prefix), timeout=CALL_TIMEOUT)
        except grpc.RpcError as e:
            raise rpc_error(e, self.socket, "status") from None
        self._health.ok()
        return resp

    async def key_status(self, key: str) -> Optional[pb.KeyStatus]:
        return next((k for k in (await self.status()).keys if k.key == key), None)

    async def run_status(self, run_id: str) -> Optional[pb.RunStatus]:
        return next((r for r in (await self.status()).runs if r.run_id == run_id), None)

    async def ping(self) -> None:
        stub = self._ensure()
        try:
            await stub.Ping(pb.PingRequest(), timeout=CALL_TIMEOUT)
        except grpc.RpcError as e:
            raise rpc_error(e, self.socket, "ping") from None
        self._health.ok()

    async def aclose(self) -> None:
        """Closes the session and the connection; the daemon frees this client's slots."""
        if self._closed:
            return
        self._closed = True
        task, channel = self._session_task, self._channel
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        if channel is not None:
            await channel.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
