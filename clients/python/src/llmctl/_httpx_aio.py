# The source of _httpx_sync.py: after changing this file, run scripts/gen-python-sync (see
# _aio.py). What the two transports share and that sends nothing is in _transport.py.
"""`AsyncLimitedTransport`, the transport of `llmctl.httpx` for ``httpx.AsyncClient`` and
``httpx2.AsyncClient``."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from types import ModuleType
from typing import Any, AsyncIterator, Callable, Dict, List, Optional, Union

from ._aio import AsyncClient, AsyncLease
from ._common import Advice, Outcome, Seconds, logger, unix_ms
from ._errors import LlmctlError
from ._estimate import DEFAULT_OUTPUT_TOKENS, IMAGE_TOKENS
from ._outcome import from_exception, from_http
from ._sse import StreamWatcher
from ._stream_usage import Unasked
from ._transport import (
    AdviceHook,
    KeyArg,
    RouteHook,
    TransportBase,
    check_client,
    is_event_stream,
    library,
    not_sent,
)

_stream_classes: Dict[str, Any] = {}
_stream_lock = threading.Lock()


def _reporting_stream(lib: ModuleType) -> Any:
    """A byte-stream class of ``lib`` that passes a response's bytes on and calls ``done`` once
    when they end, break off, or the stream is closed."""
    with _stream_lock:
        cls = _stream_classes.get(lib.__name__)
        if cls is not None:
            return cls

        # The base class is the response's library's (httpx or httpx2), known at run time only.
        class AsyncReportingStream(lib.AsyncByteStream):  # type: ignore[misc,name-defined]
            def __init__(
                self, inner: Any, watcher: StreamWatcher, done: Callable[..., Any], unasked: Optional[Unasked]
            ) -> None:
                self._inner, self._watcher, self._done, self._unasked = inner, watcher, done, unasked

            async def __aiter__(self) -> AsyncIterator[bytes]:
                try:
                    async for chunk in self._inner:
                        self._watcher.feed(chunk)
                        if self._unasked is None:
                            yield chunk
                            continue
                        # Its usage was asked for on the caller's behalf: the caller gets the
                        # stream it would have had.
                        out = self._unasked.feed(chunk)
                        if out:
                            yield out
                    if self._unasked is not None:
                        rest = self._unasked.finish()
                        if rest:
                            yield rest
                except GeneratorExit:
                    raise
                except BaseException as exc:
                    await self._done(exc)
                    raise
                await self._done(None)

            async def aclose(self) -> None:
                try:
                    await self._inner.aclose()
                finally:
                    await self._done(None)

        _stream_classes[lib.__name__] = AsyncReportingStream
        return AsyncReportingStream


class AsyncLimitedTransport(TransportBase):
    """An httpx transport limited by llmctl, for ``httpx.AsyncClient`` and ``httpx2.AsyncClient``;
    see the documentation of `llmctl.httpx`.

    ``key``: the quota's name, a string (``"{model}"`` in it is replaced by the request's model)
    or a function of the model name returning the key. Or, instead of ``key``, ``route_group``:
    the daemon grants a member of that configured group, and ``route(request, key)`` (optional)
    returns the request to send for the member granted (see `reroute`). ``client``: a
    `llmctl.AsyncClient` (default: one on ``socket``, else the default socket, fail open; its
    ``limited`` says whether the last call was limited). ``inner``: the transport that sends
    (default: the request's library's ``AsyncHTTPTransport()``; httpx2's, when it is imported,
    else httpx's, is made with this transport, the other's by its first request).
    ``max_wait``: how long an acquire may wait (default: up to an hour). ``profile``: the retry
    profile of the advice. ``on_advice(request, advice)`` is called after every report.
    """

    def __init__(
        self,
        key: Optional[KeyArg] = None,
        client: Optional[AsyncClient] = None,
        inner: Any = None,
        *,
        priority: int = 0,
        max_wait: Optional[Seconds] = None,
        run_id: Optional[str] = None,
        max_retries: Optional[int] = None,
        image_tokens: int = IMAGE_TOKENS,
        default_output_tokens: int = DEFAULT_OUTPUT_TOKENS,
        on_advice: Optional[AdviceHook] = None,
        profile: Optional[str] = None,
        route_group: Optional[str] = None,
        route: Optional[RouteHook] = None,
        socket: Union[str, "os.PathLike[str]", None] = None,
    ) -> None:
        if client is not None and socket is not None:
            raise TypeError("give client or socket, not both: the client already names its socket")
        self._socket = socket
        super().__init__(
            key,
            inner,
            priority=priority,
            max_wait=max_wait,
            run_id=run_id,
            max_retries=max_retries,
            image_tokens=image_tokens,
            default_output_tokens=default_output_tokens,
            on_advice=on_advice,
            profile=profile,
            route_group=route_group,
            route=route,
        )
        check_client(client, AsyncClient)
        self._client = client
        self._own_client = client is None
        self._make_ahead(lambda lib: lib.AsyncHTTPTransport())

    @property
    def client(self) -> AsyncClient:
        """The llmctl client asked: the one given, else one made on first use."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = AsyncClient(self._socket)
        return self._client

    async def handle_async_request(self, request: Any) -> Any:
        lib = library(request)
        inner = self._inner_for(lib)
        est = self._estimate(request)
        if est is None:
            return await inner.handle_async_request(request)
        plan = self._plan(est)
        pass  # sync: self._warn_if_async_uncovered()
        while True:
            lease = await self.client.acquire(plan.key, **self._acquire_args(est, plan))
            plan.sends += 1
            if plan.first is None:
                plan.first = time.time()
            try:
                to_send = self._usage_asked(self._routed(request, lease), plan)
            except BaseException:
                # Nothing was sent: the lease goes back as an unknown outcome, and no retry.
                await self._report(request, lease, not_sent())
                raise
            try:
                response = await inner.handle_async_request(to_send)
                # The provider had taken the request by the time its status and headers came.
                answered = unix_ms()
            except Exception as exc:
                advice = await self._report(request, lease, from_exception(exc))
                delay = self._again(plan, advice)
                if delay is not None:
                    await asyncio.sleep(delay)
                    continue
                raise
            except BaseException as exc:
                await self._report(request, lease, from_exception(exc))
                raise
            response.extensions["llmctl_key"] = lease.key
            if is_event_stream(response) and 200 <= response.status_code < 300:
                self._watch(lib, request, lease, response, answered, Unasked() if plan.usage_asked else None)
                return response
            try:
                await response.aread()
            except BaseException as exc:
                await self._report(request, lease, from_exception(exc))
                raise
            outcome = from_http(response.status_code, response.headers, response.content)
            outcome.answered_unix_ms = answered
            advice = await self._report(request, lease, outcome, response)
            if self._usage_refused(plan, to_send, response):
                # The upstream refuses to be asked for the stream's usage: the caller's own
                # request goes, once, and that upstream is not asked again.
                await response.aclose()
                continue
            delay = self._again(plan, advice)
            if delay is not None:
                await response.aclose()
                await asyncio.sleep(delay)
                continue
            return response

    def _watch(
        self,
        lib: ModuleType,
        request: Any,
        lease: AsyncLease,
        response: Any,
        answered: int,
        unasked: Optional[Unasked],
    ) -> None:
        """Reports the lease of a streamed answer once the caller has read it, or closed it."""
        watcher = StreamWatcher(response.status_code, response.headers)
        done_lock = threading.Lock()
        finished: List[bool] = []

        async def done(exc: Optional[BaseException]) -> None:
            with done_lock:
                if finished:
                    return
                finished.append(True)
            outcome = watcher.outcome(exc)
            outcome.answered_unix_ms = answered
            await self._report(request, lease, outcome, response)

        response.stream = _reporting_stream(lib)(response.stream, watcher, done, unasked)

    async def _report(
        self, request: Any, lease: AsyncLease, outcome: Outcome, response: Any = None
    ) -> Optional[Advice]:
        try:
            advice = await lease.report_outcome(outcome)
        except LlmctlError as e:
            # The answer goes to the caller whatever happens to the report.
            logger.warning("llmctl: could not report lease %s on %r: %s", lease.lease_id, lease.key, e)
            return None
        self._advised(request, advice, response)
        return advice

    async def aclose(self) -> None:
        for inner in [self._inner, *self._made.values()]:
            if inner is not None:
                await inner.aclose()
        self._made.clear()
        if self._own_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> AsyncLimitedTransport:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
