# The source of _client.py: after changing this file, run scripts/gen-python-sync, which says
# how it writes the synchronous code from this (in short: async and await go, and so do the
# lines marked `# async-only`; a line marked `# sync: CODE` becomes CODE). What the two clients
# do differently is in _connection.py.
"""`AsyncClient`, the client of the llmctl daemon, and the `AsyncLease` it grants."""

from __future__ import annotations

import asyncio
import datetime as _dt
import functools
import inspect
import os
import threading
import time
from types import TracebackType
from typing import Any, Awaitable, Callable, Generator, Mapping, Optional, Type, Union

import grpc

from . import _autostart
from . import _errors as errors
from ._autostart import answers as _answers
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
from ._connection import AsyncConnection
from ._fail_static import FAIL_STATIC_FOR, RESTART_WAIT, FailStatic
from ._lease import LeaseBase
from .v1 import limiter_pb2 as pb


def _stopping(resp: pb.AcquireResponse) -> bool:
    return not resp.granted and resp.reason_code == pb.REFUSAL_REASON_STOPPING


class AsyncLease(LeaseBase):
    """Capacity granted on a key; report what the provider answered with `report` or
    `report_response`. As a context manager (``async with``), leaving the block without a report
    reports the exception that ended it (or an unknown outcome), so the lease never leaks."""

    def __init__(self, client: AsyncClient, **kw: Any) -> None:
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
        """Settles the lease with what happened and returns the daemon's advice.

        ``status`` is the HTTP status, 0 when no answer came. ``input_tokens`` counts all input,
        cached included; ``cached_input_tokens`` is the cached part. Sizes left out are taken as
        the lease's estimate and the usage as unknown. ``attempt`` (default: the lease's) counts
        from 1, and ``first_attempt`` (a datetime or Unix seconds; default: the lease's) says
        when attempt 1 started, so the retry profile's total deadline counts from there."""
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
        """Reports from an httpx or requests response, an openai/anthropic result or raw
        response (usage and, when there, headers), or an exception the call raised (SDK
        ``APIStatusError`` and friends, timeouts, connection errors, errors inside a 200 stream).
        Pass ``stream_started=True`` when streamed output already reached the user."""
        return await self._send(self._outcome_of(obj, stream_started), None, None)

    async def report_exception(self, exc: BaseException) -> Advice:
        """Reports the exception a call raised (as ``report_response(exc)``)."""
        return await self._send(self._outcome_of(exc, None), None, None)

    async def report_outcome(self, outcome: Outcome) -> Advice:
        """Reports an `llmctl.Outcome` built by the caller."""
        return await self._send(outcome, None, None)

    async def _send(self, outcome: Outcome, attempt: Optional[int], first_attempt: Any) -> Advice:
        req = self._report_request(outcome, attempt, first_attempt)
        self._claim_report()
        try:
            self.advice = await self._client._report(self, req, outcome)
        except errors.LeaseNotFound:
            raise
        except BaseException:
            self._unclaim()  # not settled: the caller may report again
            raise
        return self.advice

    async def __aenter__(self) -> AsyncLease:
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
        except asyncio.CancelledError:  # async-only
            # Cancelled while reporting: the lease expires at its estimate.
            if exc is None:
                raise


class PendingLease:  # async-only
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
    """A connection to the llmctl daemon on this host.

    ``socket`` defaults to ``$LLMCTL_SOCKET``, else ``$XDG_RUNTIME_DIR/llmctl/llmctl.sock``, else
    ``/tmp/llmctl-$UID/llmctl.sock``. ``client_id`` (default: unique to this process) ties the
    leases to a session the client keeps open, so the daemon frees their concurrency slots when
    the process dies. ``fail_mode="open"`` lets calls proceed unlimited while the daemon is
    unreachable (with a warning at most once a minute) and reconnects by itself; ``"closed"``
    raises `llmctl.Unavailable` instead. With no ``socket`` given, a client that finds no daemon
    on the default socket starts one (``llmctl daemon --idle-exit 10m``, the binary of this
    environment or on ``PATH``) and waits for it; ``LLMCTL_AUTOSTART=0`` turns that off.

    For asyncio: the methods are coroutines, except `acquire`, whose answer is awaited or used in
    ``async with``. The connection and its session start on first use, in the running event loop.
    """

    def __init__(
        self,
        socket: Union[str, os.PathLike[str], None] = None,
        client_id: Optional[str] = None,
        fail_mode: str = "open",
        fail_static_for: float = FAIL_STATIC_FOR,
    ) -> None:
        self.fail_mode = check_fail_mode(fail_mode)
        self.fail_static_for = seconds("fail_static_for", fail_static_for, FAIL_STATIC_FOR, 86_400.0)
        self.socket = socket_path(socket)
        self.client_id = check_client_id(client_id) if client_id is not None else new_client_id()
        self._own_id = client_id is None
        self._closed = False
        # Whether the last acquire was limited by the daemon (None before any): False while
        # failing open, so a wrong socket or a stopped daemon does not go unnoticed.
        self.limited: Optional[bool] = None
        # No socket named: where no daemon answers on the default one, start one (_autostart).
        self._autostart = socket is None and _autostart.enabled()
        self._fork_lock = threading.Lock()
        self._connect()

    def _connect(self) -> None:
        if self._autostart:
            _autostart.ensure_daemon(self.socket)
        self._pid = os.getpid()
        self._health = Health(self.socket, self.fail_mode, self.fail_static_for)
        # What this client knows of each key, to limit with while the daemon is away (made
        # again in a forked child: its leases are its own, the parent's in flight are not).
        self._static = FailStatic()
        self._conn = AsyncConnection(self)

    def __repr__(self) -> str:
        return f"<llmctl.AsyncClient {self.socket} client_id={self.client_id!r} fail_mode={self.fail_mode!r}>"

    def _check_open(self) -> None:
        """Refuses a closed client; in a forked child, connects again with a session (and, unless
        given one, a client_id) of its own, before any request is made with the parent's."""
        if self._closed:
            raise errors.LlmctlError("this llmctl.AsyncClient is closed; create a new one")
        if os.getpid() != self._pid:
            # The parent's session did not come along, and must not be shared. (gRPC itself
            # needs GRPC_ENABLE_FORK_SUPPORT=1 to work here.)
            with self._fork_lock:
                if os.getpid() != self._pid:
                    if self._own_id:
                        self.client_id = new_client_id()
                    self._connect()

    def _ensure(self) -> Any:
        """The stub to call the daemon with, once the client is open."""
        self._check_open()
        return self._conn.stub()

    @property
    def connected(self) -> bool:
        """Whether the session with the daemon is open right now."""
        return self._conn.connected

    async def wait_connected(self, timeout: Optional[float] = None) -> bool:
        """Waits until the session with the daemon is open; False if ``timeout`` passed first.
        Raises `llmctl.LlmctlError` on a closed client (its session will never open)."""
        self._ensure()  # sync: self._check_open()
        return await self._conn.wait_connected(timeout)

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
        output_tokens_declared: Optional[bool] = None,
    ) -> PendingLease:  # sync: ) -> Lease:
        """Reserves ``requests``, ``input_tokens`` and ``output_tokens`` (the call's max_tokens) on
        ``key`` and its ancestors, waiting in the daemon up to ``max_wait`` seconds (default: its
        maximum, one hour). Raises `llmctl.NotGranted` when capacity will not come in time, and
        `llmctl.RunBudgetExceeded` (a `NotGranted`) when the run ``run_id`` spent its budget.

        ``route_group`` (instead of ``key``) asks for the first member of that configured group
        that can serve; ``lease.key`` is then the member granted. ``profile`` names the retry
        profile of the advice (``"interactive"``, ``"batch"`` or a configured one; default: the
        key's). ``attempt`` and ``first_attempt`` (when attempt 1 started: a datetime or Unix
        seconds) are sent with the lease's report. ``output_tokens_declared=False`` says the call
        names no max_tokens: the daemon then reserves what answers on the key produced lately
        (``output_tokens`` until any answer came) and settles at what the call produces.

        For asyncio: the answer is a `PendingLease`, for ``lease = await client.acquire(...)`` or
        ``async with client.acquire(...) as lease:``. The input is checked at once."""
        self._check_open()
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
            output_tokens_declared=output_tokens_declared,
        )
        grant = functools.partial(self._acquire, req, wait, attempt, first_ms)
        return PendingLease(grant)  # sync: return grant()

    async def _acquire(self, req: pb.AcquireRequest, wait: float, attempt: int, first_ms: int) -> AsyncLease:
        self._ensure()
        while True:
            epoch = self._health.epoch
            resp: Optional[pb.AcquireResponse] = None
            if self._health.should_try():
                try:
                    resp = await self._conn.acquire(req, wait + CALL_TIMEOUT)
                except grpc.RpcError as e:
                    if not (is_unreachable(e) and self._health.fail_open):
                        raise rpc_error(e, self.socket, "acquire") from None
                    self._health.failed(e.details() or e.code().name)
                else:
                    if _stopping(resp) and self._health.fail_open:
                        # A stopping daemon is an unreachable one.
                        self._health.failed("the daemon is stopping")
                        resp = None
            if resp is None:
                # Failing open, unless the daemon is only restarting: then the call waits for it.
                resp = await self._after_restart(req, wait)
            if resp is None and self._health.phase() != "up":
                # Then limited with what this client last knew of the key, or not at all.
                lease = await self._static_lease(req, wait, attempt, first_ms)
                if lease is not None:
                    return lease
            if resp is not None:
                break
            # Another call found the daemon back while this one waited: it asks it too.
        self._health.ok()
        self.limited = True
        if not resp.granted:
            raise not_granted(resp, req)
        key = resp.key or req.key
        self._static.granted(key, time.monotonic())
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
            on_done=functools.partial(self._static.released, key),
        )

    async def _static_lease(
        self, req: pb.AcquireRequest, wait: float, attempt: int, first_ms: int
    ) -> Optional[AsyncLease]:
        """While the daemon is away past its restart: a key this client was granted on lately is
        paced at the rate and concurrency it was getting (conformance/fail_static.json), waiting
        up to ``wait``; any other key, or past ``fail_static_for``, goes unlimited."""
        give_up = time.monotonic() + wait
        phase = self._health.phase()
        while phase == "static":
            now = time.monotonic()
            delay = self._static.take(req.key, self._health.down_since, now)
            if delay is None:
                break
            if delay == 0.0:
                lease = self._unlimited(req, attempt, first_ms)
                lease._on_done = functools.partial(self._static.released, req.key)
                return lease
            if now + delay > give_up:
                raise errors.NotGranted(
                    req.key,
                    f"the llmctl daemon on {self.socket} is away, and what this client last knew of "
                    "the key (its grant rate and concurrency) allows no call within max_wait",
                    None,
                    waited=now + wait - give_up,
                    reason_code="fail_static",
                )
            await asyncio.sleep(min(delay, 0.1))  # sync: time.sleep(min(delay, 0.1))
            phase = self._health.phase()
        if phase == "up":
            return None  # the daemon is back: ask it
        return self._unlimited(req, attempt, first_ms)

    async def _after_restart(self, req: pb.AcquireRequest, wait: float) -> Optional[pb.AcquireResponse]:
        """The answer of a daemon that went away moments ago (restarting, most likely) once it is
        back, so that a restart sends no call unlimited; None when it is not back within
        `RESTART_WAIT` of going away, or it never answered this client."""
        # Bounded here too, whatever the health says.
        give_up = time.monotonic() + RESTART_WAIT
        while self._health.restarting() and time.monotonic() < give_up:
            # Sent once the channel has reconnected (within 250 ms), never waiting past the window.
            if _answers(self.socket) and await self._conn.ready(max(0.01, give_up - time.monotonic())):
                try:
                    resp = await self._conn.acquire(req, wait + CALL_TIMEOUT)
                except grpc.RpcError as e:
                    if not is_unreachable(e):
                        raise rpc_error(e, self.socket, "acquire") from None
                else:
                    if not _stopping(resp):
                        return resp
            await asyncio.sleep(0.02)  # sync: time.sleep(0.02)
        return None

    def _unlimited(self, req: pb.AcquireRequest, attempt: int, first_ms: int) -> AsyncLease:
        self.limited = False
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
            return local_advice(outcome, req.attempt)
        stub = self._ensure()
        try:
            resp = await stub.Report(req, timeout=CALL_TIMEOUT)
        except grpc.RpcError as e:
            if is_unreachable(e) and self._health.fail_open:
                self._health.failed(e.details() or e.code().name)
                return local_advice(outcome, req.attempt)
            err = rpc_error(e, self.socket, "report")
            if (
                isinstance(err, errors.LeaseNotFound)
                and self._health.fail_open
                and lease._epoch != self._health.epoch
            ):
                # The daemon went away since this lease was granted and took it along.
                logger.info("llmctl: lease %s was lost when the daemon restarted", lease.lease_id)
                return local_advice(outcome, req.attempt)
            raise err from None
        self._health.ok()
        return advice_from(resp)

    async def cooldown(self, key: str, seconds_: Seconds, reason: str = "") -> Optional[_dt.datetime]:
        """Stops the daemon granting on ``key`` (and the keys below it) for ``seconds_``; never
        shortens a longer cooldown. Returns when it ends (None if the daemon is unreachable and
        fail_mode is open)."""
        stub = self._ensure()
        check_key(key)
        dur = seconds("seconds", seconds_, 0.0, 86400.0)
        if dur <= 0:
            raise errors.InvalidArgument(f"cooldown of {dur} s on {key!r}: give a positive duration")
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
        """Sets (or replaces) the budget of the run ``run_id``: at most ``max_calls`` leases,
        ``max_retries`` retries and ``max_wall_time`` seconds (or a timedelta) from the run's
        first call; None leaves that bound out. Past it, acquiring with this ``run_id`` raises
        `llmctl.RunBudgetExceeded`. Returns True once the daemon holds the budget, False when it
        is unreachable and fail_mode is open (nothing is bounded then)."""
        stub = self._ensure()
        req = run_budget_request(run_id, max_calls, max_retries, max_wall_time)
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
        """Claims the work named ``key`` (a job id, a hash of the request) for ``ttl`` seconds
        (or a timedelta): the answer's ``state`` is ``"claimed"`` (yours: do it, then
        `complete`), ``"pending"`` (another worker's since ``.since``) or ``"done"`` (``.result``
        holds the stored bytes). A claim never completed lapses after its ttl and may be claimed
        again. The daemon records the claim on disk before it answers.

        When the daemon's store lost records, a job it does not know may have been done before
        the loss: the claim raises `llmctl.ClaimHistoryLost` unless ``accept_lost_history`` is
        true (the caller takes an unknown job as not done).

        Idempotency cannot be decided without the daemon, so an unreachable daemon raises
        `llmctl.Unavailable` whatever the fail_mode (after waiting up to 10 s for one that is
        restarting)."""
        stub = self._ensure()
        req = claim_request(key, ttl, accept_lost_history)
        try:
            resp = await stub.Claim(req, timeout=CALL_TIMEOUT, wait_for_ready=True)
        except grpc.RpcError as e:
            raise rpc_error(e, self.socket, "claim") from None
        self._health.ok()
        return claim_result(key, resp)

    async def complete(self, key: str, result: BytesLike) -> None:
        """Stores ``result`` (bytes, at most the daemon's max_claim_result, 1 MiB by default) as
        the outcome of the work ``key``, which must be claimed: later claims answer ``"done"``
        with it. Raises `llmctl.Unavailable` when the daemon does not answer within 10 s,
        whatever the fail_mode; completing again with the same result is harmless, while a job
        never claimed, done with another result, or claimed by another user raises
        `llmctl.ClaimRefused`."""
        stub = self._ensure()
        req = complete_request(key, result)
        try:
            await stub.Complete(req, timeout=CALL_TIMEOUT, wait_for_ready=True)
        except grpc.RpcError as e:
            raise rpc_error(e, self.socket, "complete") from None
        self._health.ok()

    async def run_once(
        self,
        key: str,
        fn: Callable[[], Union[bytes, Awaitable[bytes]]],  # sync: fn: Callable[[], bytes],
        *,
        ttl: Seconds = DEFAULT_RUN_ONCE_TTL,
    ) -> bytes:
        """Does the work ``key`` once across every process on the host: returns the stored
        result when it is done already, raises `llmctl.Pending` (with ``.since``) while another
        worker holds it, and otherwise calls ``fn()``, stores what it returns with `complete`
        and returns it.

        ``fn`` takes no arguments and returns bytes (at most 1 MiB; serialise anything else,
        e.g. ``json.dumps(value).encode()``). It must finish within ``ttl`` seconds (default 10
        minutes), or another worker may claim the work again. If ``fn`` raises, nothing is
        stored, the exception propagates and the claim lapses after its ttl; if it returns
        something other than bytes, `llmctl.InvalidArgument` is raised the same way.

        For asyncio: ``fn`` may also be a coroutine function; its result is awaited."""
        claimed = await self.claim(key, ttl)
        if claimed.state == "done":
            assert claimed.result is not None
            return claimed.result
        if claimed.state == "pending":
            raise errors.Pending(key, claimed.since)
        value = fn()
        if inspect.isawaitable(value):  # async-only
            value = await value
        data = result_bytes(key, value, "fn's result")
        await self.complete(key, data)
        return data

    async def status(self, key_prefix: str = "") -> pb.StatusResponse:
        """Every key's limits, levels, queue, cooldown and counters (`StatusResponse`), or only
        those of keys starting with ``key_prefix``. Raises `llmctl.Unavailable` when the daemon
        does not answer, whatever the fail_mode."""
        stub = self._ensure()
        try:
            resp: pb.StatusResponse = await stub.Status(
                pb.StatusRequest(key_prefix=key_prefix), timeout=CALL_TIMEOUT
            )
        except grpc.RpcError as e:
            raise rpc_error(e, self.socket, "status") from None
        self._health.ok()
        return resp

    async def key_status(self, key: str) -> Optional[pb.KeyStatus]:
        """The status of one key, or None if the daemon does not know it yet."""
        status = await self.status()
        return next((k for k in status.keys if k.key == key), None)

    async def run_status(self, run_id: str) -> Optional[pb.RunStatus]:
        """The calls, retries, wall time and budget of one run, or None if the daemon does not
        track it (yet, or any more)."""
        status = await self.status()
        return next((r for r in status.runs if r.run_id == run_id), None)

    async def ping(self) -> None:
        """Raises `llmctl.Unavailable` unless the daemon answers."""
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
        await self._conn.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
