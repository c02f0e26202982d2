# Generated from _httpx_aio.py by scripts/gen-python-sync: do not edit; change _httpx_aio.py and run it.
"""`LimitedTransport`, the transport of `llmctl.httpx` for ``httpx.Client`` and
``httpx2.Client``."""

from __future__ import annotations

import os
import threading
import time
from types import ModuleType
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

from ._client import Client, Lease
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
        class SyncReportingStream(lib.SyncByteStream):  # type: ignore[misc,name-defined]
            def __init__(
                self, inner: Any, watcher: StreamWatcher, done: Callable[..., Any], unasked: Optional[Unasked]
            ) -> None:
                self._inner, self._watcher, self._done, self._unasked = inner, watcher, done, unasked

            def __iter__(self) -> Iterator[bytes]:
                try:
                    for chunk in self._inner:
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
                    self._done(exc)
                    raise
                self._done(None)

            def close(self) -> None:
                try:
                    self._inner.close()
                finally:
                    self._done(None)

        _stream_classes[lib.__name__] = SyncReportingStream
        return SyncReportingStream


class LimitedTransport(TransportBase):
    """An httpx transport limited by llmctl, for ``httpx.Client`` and ``httpx2.Client``;
    see the documentation of `llmctl.httpx`.

    ``key``: the quota's name, a string (``"{model}"`` in it is replaced by the request's model)
    or a function of the model name returning the key. Or, instead of ``key``, ``route_group``:
    the daemon grants a member of that configured group, and ``route(request, key)`` (optional)
    returns the request to send for the member granted (see `reroute`). ``client``: a
    `llmctl.Client` (default: one on ``socket``, else the default socket, fail open; its
    ``limited`` says whether the last call was limited). ``inner``: the transport that sends
    (default: the request's library's ``HTTPTransport()``; httpx2's, when it is imported,
    else httpx's, is made with this transport, the other's by its first request).
    ``max_wait``: how long an acquire may wait (default: up to an hour). ``profile``: the retry
    profile of the advice. ``on_advice(request, advice)`` is called after every report.
    """

    def __init__(
        self,
        key: Optional[KeyArg] = None,
        client: Optional[Client] = None,
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
        check_client(client, Client)
        self._client = client
        self._own_client = client is None
        self._make_ahead(lambda lib: lib.HTTPTransport())

    @property
    def client(self) -> Client:
        """The llmctl client asked: the one given, else one made on first use."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = Client(self._socket)
        return self._client

    def handle_request(self, request: Any) -> Any:
        lib = library(request)
        inner = self._inner_for(lib)
        est = self._estimate(request)
        if est is None:
            return inner.handle_request(request)
        plan = self._plan(est)
        self._warn_if_async_uncovered()
        while True:
            lease = self.client.acquire(plan.key, **self._acquire_args(est, plan))
            plan.sends += 1
            if plan.first is None:
                plan.first = time.time()
            try:
                to_send = self._usage_asked(self._routed(request, lease), plan)
            except BaseException:
                # Nothing was sent: the lease goes back as an unknown outcome, and no retry.
                self._report(request, lease, not_sent())
                raise
            try:
                response = inner.handle_request(to_send)
                # The provider had taken the request by the time its status and headers came.
                answered = unix_ms()
            except Exception as exc:
                advice = self._report(request, lease, from_exception(exc))
                delay = self._again(plan, advice)
                if delay is not None:
                    time.sleep(delay)
                    continue
                raise
            except BaseException as exc:
                self._report(request, lease, from_exception(exc))
                raise
            response.extensions["llmctl_key"] = lease.key
            if is_event_stream(response) and 200 <= response.status_code < 300:
                self._watch(lib, request, lease, response, answered, Unasked() if plan.usage_asked else None)
                return response
            try:
                response.read()
            except BaseException as exc:
                self._report(request, lease, from_exception(exc))
                raise
            outcome = from_http(response.status_code, response.headers, response.content)
            outcome.answered_unix_ms = answered
            advice = self._report(request, lease, outcome, response)
            if self._usage_refused(plan, to_send, response):
                # The upstream refuses to be asked for the stream's usage: the caller's own
                # request goes, once, and that upstream is not asked again.
                response.close()
                continue
            delay = self._again(plan, advice)
            if delay is not None:
                response.close()
                time.sleep(delay)
                continue
            return response

    def _watch(
        self,
        lib: ModuleType,
        request: Any,
        lease: Lease,
        response: Any,
        answered: int,
        unasked: Optional[Unasked],
    ) -> None:
        """Reports the lease of a streamed answer once the caller has read it, or closed it."""
        watcher = StreamWatcher(response.status_code, response.headers)
        done_lock = threading.Lock()
        finished: List[bool] = []

        def done(exc: Optional[BaseException]) -> None:
            with done_lock:
                if finished:
                    return
                finished.append(True)
            outcome = watcher.outcome(exc)
            outcome.answered_unix_ms = answered
            self._report(request, lease, outcome, response)

        response.stream = _reporting_stream(lib)(response.stream, watcher, done, unasked)

    def _report(self, request: Any, lease: Lease, outcome: Outcome, response: Any = None) -> Optional[Advice]:
        try:
            advice = lease.report_outcome(outcome)
        except LlmctlError as e:
            # The answer goes to the caller whatever happens to the report.
            logger.warning("llmctl: could not report lease %s on %r: %s", lease.lease_id, lease.key, e)
            return None
        self._advised(request, advice, response)
        return advice

    def close(self) -> None:
        for inner in [self._inner, *self._made.values()]:
            if inner is not None:
                inner.close()
        self._made.clear()
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> LimitedTransport:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
