"""httpx transports that ask llmctl before every provider request and report after it, so the
official SDKs are limited without changing the code that calls them:

    import httpx2, openai
    from llmctl.httpx import LimitedTransport

    client = openai.OpenAI(
        http_client=httpx2.Client(transport=LimitedTransport(key="openai/gpt-5.5")),
        max_retries=0,  # llmctl paces the calls; SDK retries would multiply them
    )

They work with ``httpx`` and with ``httpx2`` clients (the openai and anthropic SDKs use
``httpx2`` from their 3.x / 2.x releases; earlier ones use ``httpx``): each request is sent with
the library it came from. POST requests with a JSON body are limited; everything else passes
straight through.

For each limited request the transport estimates the input tokens from the body (characters / 4
over the text, 3 per message, ``image_tokens`` per image; see ``llmctl._estimate``) and the output
from ``max_tokens`` / ``max_completion_tokens`` / ``max_output_tokens`` (else
``default_output_tokens``), acquires a lease on ``key``, sends the request with the inner
transport, and reports the status, the rate-limit headers and the usage from the response. A
streamed answer (server-sent events) is watched as the caller reads it: the usage comes from the
final events (OpenAI's last chunk when ``stream_options={"include_usage": True}``, Anthropic's
``message_start`` / ``message_delta``), an error event inside the 200 is reported with its type
and whether output had already been delivered, and the report goes when the stream is exhausted
or closed.

The transport does not retry on its own: it returns the provider's answer, so the SDK raises as
usual. With ``max_retries=N`` it follows the daemon's advice itself, for answers that arrive
whole (not a streamed 200): a ``retry`` advice waits ``retry_after`` and sends again, up to N
times. Keep the SDK's own ``max_retries=0`` either way.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
import time
from types import ModuleType
from typing import Any, Callable, Dict, List, Optional, Union

from ._aio import AsyncClient, AsyncLease
from ._client import Client, Lease
from ._common import Advice, Outcome, Seconds, logger
from ._errors import LlmctlError
from ._estimate import DEFAULT_OUTPUT_TOKENS, IMAGE_TOKENS, Estimate, estimate_body
from ._outcome import from_exception, from_http
from ._sse import StreamWatcher

__all__ = ["LimitedTransport", "AsyncLimitedTransport", "Estimate"]

KeyArg = Union[str, Callable[[str], str]]
AdviceHook = Callable[[Any, Advice], None]


def _library(obj: Any) -> ModuleType:
    """The httpx flavour (``httpx`` or ``httpx2``) an object belongs to."""
    return importlib.import_module(type(obj).__module__.split(".")[0])


def _is_event_stream(response: Any) -> bool:
    return "text/event-stream" in response.headers.get("content-type", "").lower()


_stream_classes: Dict[str, Any] = {}
_stream_lock = threading.Lock()


def _reporting_stream(lib: ModuleType, asynchronous: bool) -> Any:
    """A byte-stream class of ``lib`` that passes a response's bytes on and calls ``done`` once
    when they end, break off, or the stream is closed."""
    name = f"{lib.__name__}:{'async' if asynchronous else 'sync'}"
    with _stream_lock:
        cls = _stream_classes.get(name)
        if cls is not None:
            return cls
        if asynchronous:

            class AsyncReportingStream(lib.AsyncByteStream):  # type: ignore[name-defined,misc]
                def __init__(self, inner: Any, watcher: StreamWatcher, done: Any) -> None:
                    self._inner, self._watcher, self._done = inner, watcher, done

                async def __aiter__(self) -> Any:
                    try:
                        async for chunk in self._inner:
                            self._watcher.feed(chunk)
                            yield chunk
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

            cls = AsyncReportingStream
        else:

            class SyncReportingStream(lib.SyncByteStream):  # type: ignore[name-defined,misc]
                def __init__(self, inner: Any, watcher: StreamWatcher, done: Any) -> None:
                    self._inner, self._watcher, self._done = inner, watcher, done

                def __iter__(self) -> Any:
                    try:
                        for chunk in self._inner:
                            self._watcher.feed(chunk)
                            yield chunk
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

            cls = SyncReportingStream
        _stream_classes[name] = cls
        return cls


class _Base:
    def __init__(
        self,
        key: KeyArg,
        inner: Any,
        *,
        priority: int,
        max_wait: Optional[Seconds],
        run_id: Optional[str],
        max_retries: int,
        image_tokens: int,
        default_output_tokens: int,
        on_advice: Optional[AdviceHook],
    ) -> None:
        if not (isinstance(key, str) or callable(key)):
            raise TypeError(f"key must be a string or a function of the model name, not {key!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries = {max_retries!r}: give 0 (no retries) or more")
        self.key = key
        self.priority = priority
        self.max_wait = max_wait
        self.run_id = run_id
        self.max_retries = max_retries
        self.image_tokens = image_tokens
        self.default_output_tokens = default_output_tokens
        self.on_advice = on_advice
        self._inner = inner
        # Without an inner transport given, one per library, made on first use.
        self._made: Dict[str, Any] = {}
        self._lock = threading.Lock()

    def _inner_for(self, lib: ModuleType, asynchronous: bool) -> Any:
        if self._inner is not None:
            return self._inner
        made = self._made.get(lib.__name__)
        if made is None:
            with self._lock:
                made = self._made.get(lib.__name__)
                if made is None:
                    made = lib.AsyncHTTPTransport() if asynchronous else lib.HTTPTransport()
                    self._made[lib.__name__] = made
        return made

    def _key_for(self, est: Estimate) -> str:
        if callable(self.key):
            return self.key(est.model)
        if "{model}" in self.key:
            return self.key.replace("{model}", est.model or "unknown")
        return self.key

    def _estimate(self, request: Any) -> Optional[Estimate]:
        if request.method.upper() != "POST":
            return None
        ctype = request.headers.get("content-type", "").lower()
        if ctype and "json" not in ctype:
            return None
        try:
            content = request.content
        except Exception:
            return None
        if not content or content.lstrip()[:1] != b"{":
            return None
        return estimate_body(
            content, image_tokens=self.image_tokens, default_output_tokens=self.default_output_tokens
        )

    def _advised(self, request: Any, advice: Optional[Advice]) -> None:
        if advice is not None and self.on_advice is not None:
            try:
                self.on_advice(request, advice)
            except Exception:
                logger.exception("llmctl: the on_advice hook raised")

    def _retry(self, advice: Optional[Advice], attempt: int) -> bool:
        return advice is not None and advice.action == "retry" and attempt <= self.max_retries


class LimitedTransport(_Base):
    """An httpx (or httpx2) transport limited by llmctl; see the module's documentation.

    ``key``: the quota's name, a string (``"{model}"`` in it is replaced by the request's model)
    or a function of the model name returning the key. ``client``: a `llmctl.Client` (default:
    one on the default socket, fail open). ``inner``: the transport that sends (default: the
    request's library's ``HTTPTransport()``). ``max_wait``: how long an acquire may wait
    (default: up to an hour). ``on_advice(request, advice)`` is called after every report.
    """

    def __init__(
        self,
        key: KeyArg,
        client: Optional[Client] = None,
        inner: Any = None,
        *,
        priority: int = 0,
        max_wait: Optional[Seconds] = None,
        run_id: Optional[str] = None,
        max_retries: int = 0,
        image_tokens: int = IMAGE_TOKENS,
        default_output_tokens: int = DEFAULT_OUTPUT_TOKENS,
        on_advice: Optional[AdviceHook] = None,
    ) -> None:
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
        )
        if client is not None and not isinstance(client, Client):
            raise TypeError(
                f"client must be an llmctl.Client (AsyncLimitedTransport takes an AsyncClient), not {client!r}"
            )
        self._client = client
        self._own_client = client is None

    @property
    def client(self) -> Client:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = Client()
        return self._client

    def handle_request(self, request: Any) -> Any:
        lib = _library(request)
        inner = self._inner_for(lib, False)
        est = self._estimate(request)
        if est is None:
            return inner.handle_request(request)
        key = self._key_for(est)
        attempt = 1
        while True:
            lease = self.client.acquire(
                key,
                input_tokens=est.input_tokens,
                output_tokens=est.output_tokens,
                priority=self.priority,
                max_wait=self.max_wait,
                run_id=self.run_id,
                attempt=attempt,
            )
            try:
                response = inner.handle_request(request)
            except Exception as exc:
                advice = self._report(request, lease, from_exception(exc))
                if self._retry(advice, attempt):
                    time.sleep(advice.retry_after if advice else 0)
                    attempt += 1
                    continue
                raise
            except BaseException as exc:
                self._report(request, lease, from_exception(exc))
                raise
            if _is_event_stream(response) and 200 <= response.status_code < 300:
                self._watch(lib, request, lease, response)
                return response
            try:
                response.read()
            except BaseException as exc:
                self._report(request, lease, from_exception(exc))
                raise
            advice = self._report(
                request, lease, from_http(response.status_code, response.headers, response.content)
            )
            if self._retry(advice, attempt):
                response.close()
                time.sleep(advice.retry_after if advice else 0)
                attempt += 1
                continue
            return response

    def _watch(self, lib: ModuleType, request: Any, lease: Lease, response: Any) -> None:
        watcher = StreamWatcher(response.status_code, response.headers)
        done_lock = threading.Lock()
        finished: List[bool] = []

        def done(exc: Optional[BaseException]) -> None:
            with done_lock:
                if finished:
                    return
                finished.append(True)
            self._report(request, lease, watcher.outcome(exc))

        response.stream = _reporting_stream(lib, False)(response.stream, watcher, done)

    def _report(self, request: Any, lease: Lease, outcome: Outcome) -> Optional[Advice]:
        try:
            advice = lease.report_outcome(outcome)
        except LlmctlError as e:
            # The answer goes to the caller whatever happens to the report.
            logger.warning("llmctl: could not report lease %s on %r: %s", lease.lease_id, lease.key, e)
            return None
        self._advised(request, advice)
        return advice

    def close(self) -> None:
        for inner in [self._inner, *self._made.values()]:
            if inner is not None:
                inner.close()
        self._made.clear()
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> "LimitedTransport":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncLimitedTransport(_Base):
    """`LimitedTransport` for ``httpx.AsyncClient`` / ``httpx2.AsyncClient``, with a
    `llmctl.AsyncClient`."""

    def __init__(
        self,
        key: KeyArg,
        client: Optional[AsyncClient] = None,
        inner: Any = None,
        *,
        priority: int = 0,
        max_wait: Optional[Seconds] = None,
        run_id: Optional[str] = None,
        max_retries: int = 0,
        image_tokens: int = IMAGE_TOKENS,
        default_output_tokens: int = DEFAULT_OUTPUT_TOKENS,
        on_advice: Optional[AdviceHook] = None,
    ) -> None:
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
        )
        if client is not None and not isinstance(client, AsyncClient):
            raise TypeError(
                f"client must be an llmctl.AsyncClient (LimitedTransport takes a Client), not {client!r}"
            )
        self._client = client
        self._own_client = client is None

    @property
    def client(self) -> AsyncClient:
        if self._client is None:
            self._client = AsyncClient()
        return self._client

    async def handle_async_request(self, request: Any) -> Any:
        lib = _library(request)
        inner = self._inner_for(lib, True)
        est = self._estimate(request)
        if est is None:
            return await inner.handle_async_request(request)
        key = self._key_for(est)
        attempt = 1
        while True:
            lease = await self.client.acquire(
                key,
                input_tokens=est.input_tokens,
                output_tokens=est.output_tokens,
                priority=self.priority,
                max_wait=self.max_wait,
                run_id=self.run_id,
                attempt=attempt,
            )
            try:
                response = await inner.handle_async_request(request)
            except Exception as exc:
                advice = await self._report(request, lease, from_exception(exc))
                if self._retry(advice, attempt):
                    await asyncio.sleep(advice.retry_after if advice else 0)
                    attempt += 1
                    continue
                raise
            except BaseException as exc:
                await self._report(request, lease, from_exception(exc))
                raise
            if _is_event_stream(response) and 200 <= response.status_code < 300:
                self._watch(lib, request, lease, response)
                return response
            try:
                await response.aread()
            except BaseException as exc:
                await self._report(request, lease, from_exception(exc))
                raise
            advice = await self._report(
                request, lease, from_http(response.status_code, response.headers, response.content)
            )
            if self._retry(advice, attempt):
                await response.aclose()
                await asyncio.sleep(advice.retry_after if advice else 0)
                attempt += 1
                continue
            return response

    def _watch(self, lib: ModuleType, request: Any, lease: AsyncLease, response: Any) -> None:
        watcher = StreamWatcher(response.status_code, response.headers)
        finished: List[bool] = []

        async def done(exc: Optional[BaseException]) -> None:
            if finished:
                return
            finished.append(True)
            await self._report(request, lease, watcher.outcome(exc))

        response.stream = _reporting_stream(lib, True)(response.stream, watcher, done)

    async def _report(self, request: Any, lease: AsyncLease, outcome: Outcome) -> Optional[Advice]:
        try:
            advice = await lease.report_outcome(outcome)
        except LlmctlError as e:
            logger.warning("llmctl: could not report lease %s on %r: %s", lease.lease_id, lease.key, e)
            return None
        except asyncio.CancelledError:
            raise
        self._advised(request, advice)
        return advice

    async def aclose(self) -> None:
        for inner in [self._inner, *self._made.values()]:
            if inner is not None:
                await inner.aclose()
        self._made.clear()
        if self._own_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> "AsyncLimitedTransport":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
