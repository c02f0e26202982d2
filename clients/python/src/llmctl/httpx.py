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
usual. Each advice goes to ``on_advice(request, advice)`` and onto the response as
``response.extensions["llmctl_advice"]`` (an SDK's ``APIStatusError.response`` carries it), with
the key reported as ``response.extensions["llmctl_key"]``. With ``max_retries=N`` it follows the
daemon's advice itself, for answers that arrive whole (not a streamed 200): a ``retry`` advice
waits ``retry_after`` and sends again, up to N times. Keep the SDK's own ``max_retries=0``
either way.

With ``route_group=`` instead of ``key=`` the daemon grants a member of that configured group
and the report goes to that member. The request is sent as the SDK made it unless a
``route(request, key)`` hook returns the request for the member (`reroute` copies one with
another origin, model or headers); with such a hook and ``max_retries`` the transport also
follows a ``fallback`` advice to the key it names.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import threading
import time
from types import ModuleType
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from ._aio import AsyncClient, AsyncLease
from ._client import Client, Lease
from ._common import Advice, Outcome, Seconds, check_key, check_name, logger
from ._errors import LlmctlError
from ._estimate import DEFAULT_OUTPUT_TOKENS, IMAGE_TOKENS, Estimate, estimate_body
from ._lease import LeaseBase
from ._outcome import from_exception, from_http
from ._sse import StreamWatcher

__all__ = ["LimitedTransport", "AsyncLimitedTransport", "Estimate", "reroute"]

KeyArg = Union[str, Callable[[str], str]]
AdviceHook = Callable[[Any, Advice], None]
RouteHook = Callable[[Any, str], Any]


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
        key: Optional[KeyArg],
        inner: Any,
        *,
        priority: int,
        max_wait: Optional[Seconds],
        run_id: Optional[str],
        max_retries: int,
        image_tokens: int,
        default_output_tokens: int,
        on_advice: Optional[AdviceHook],
        profile: Optional[str],
        route_group: Optional[str],
        route: Optional[RouteHook],
    ) -> None:
        if route_group is not None:
            if key is not None:
                raise TypeError(
                    "give key or route_group, not both: with a route group the daemon picks the " "member key"
                )
            check_key(route_group, "route_group")
        elif not (isinstance(key, str) or callable(key)):
            raise TypeError(f"key must be a string or a function of the model name, not {key!r}")
        if route is not None and (route_group is None or not callable(route)):
            raise TypeError("route must be a function (request, key) -> request, given with route_group")
        if profile is not None:
            check_name(profile, "profile", "'interactive', 'batch' or one configured in [profiles]")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries = {max_retries!r}: give 0 (no retries) or more")
        self.key = key
        self.route_group = route_group
        self.route = route
        self.profile = profile
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

    def _key_for(self, est: Estimate) -> Optional[str]:
        if self.key is None:
            return None  # a route group: the daemon picks the member
        if callable(self.key):
            return self.key(est.model)
        if "{model}" in self.key:
            return self.key.replace("{model}", est.model or "unknown")
        return self.key

    def _acquire_args(self, est: Estimate, plan: "_Plan") -> Dict[str, Any]:
        return dict(
            input_tokens=est.input_tokens,
            output_tokens=est.output_tokens,
            priority=self.priority,
            max_wait=self.max_wait,
            run_id=self.run_id,
            route_group=plan.route_group,
            profile=self.profile,
            attempt=plan.attempt,
            first_attempt=plan.first,
        )

    def _routed(self, request: Any, lease: LeaseBase) -> Any:
        """The request to send on the lease: as it came, or as the ``route`` hook makes it for
        the member key the daemon granted."""
        if self.route is None or not lease.limited:
            return request
        routed = self.route(request, lease.key)
        if routed is None or routed is request:
            return request
        for name, value in request.extensions.items():
            routed.extensions.setdefault(name, value)  # timeouts and the like
        return routed

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

    def _advised(self, request: Any, advice: Optional[Advice], response: Any = None) -> None:
        if advice is not None and response is not None:
            # Where the caller can see it: an SDK's APIStatusError carries this response.
            response.extensions["llmctl_advice"] = advice
        if advice is not None and self.on_advice is not None:
            try:
                self.on_advice(request, advice)
            except Exception:
                logger.exception("llmctl: the on_advice hook raised")

    def _plan(self, est: Estimate) -> "_Plan":
        return _Plan(self._key_for(est), self.route_group)

    def _again(self, plan: "_Plan", advice: Optional[Advice]) -> Optional[float]:
        """Whether to send the request again after this advice (and after how many seconds),
        within ``max_retries``: on ``retry``, on the same key; on ``fallback``, on the key
        advised, only when a ``route`` hook says how to send the request there."""
        if advice is None or plan.sends > self.max_retries:
            return None
        if advice.action == "retry":
            plan.attempt += 1
            return advice.retry_after
        if advice.action == "fallback" and advice.fallback_key and self.route is not None:
            plan.key, plan.route_group = advice.fallback_key, None
            plan.attempt, plan.first = 1, None
            return 0.0
        return None


def _not_sent() -> Outcome:
    """The outcome of a lease whose request was never sent (the route hook raised)."""
    return Outcome(status=0, headers={}, error_type="unreported", usage_known=False)


class _Plan:
    """Where the next send of one request goes: a key or a route group, the attempt number
    there and when its attempt 1 was granted, and how many sends there were."""

    def __init__(self, key: Optional[str], route_group: Optional[str]) -> None:
        self.key = key
        self.route_group = route_group
        self.attempt = 1
        # When attempt 1 on this key was granted (Unix seconds): the profile's deadline counts
        # from there, not from time spent queueing for it.
        self.first: Optional[float] = None
        self.sends = 0


def reroute(
    request: Any,
    *,
    origin: Optional[str] = None,
    model: Optional[str] = None,
    headers: Optional[Mapping[str, str]] = None,
) -> Any:
    """A copy of an httpx (or httpx2) request for another member of a route group, for a
    transport's ``route`` hook: ``origin`` (``"https://host[:port]"``) replaces the URL's scheme,
    host and port, keeping its path; ``model`` replaces the ``"model"`` of the JSON body;
    ``headers`` sets or replaces headers (the member's API key, say). Nothing else changes."""
    lib = _library(request)
    url = request.url
    if origin is not None:
        o = lib.URL(origin)
        if not o.scheme or not o.host or o.path not in ("", "/") or o.query:
            raise ValueError(
                f"origin {origin!r} must be a scheme, host and port only, such as 'https://eu.example.com'"
            )
        url = url.copy_with(scheme=o.scheme, host=o.host, port=o.port)
    content = request.content
    if model is not None:
        try:
            body = json.loads(content)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise ValueError("model= needs a request whose body is a JSON object")
        body["model"] = model
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    kept = [
        (name, value)
        for name, value in request.headers.multi_items()
        if name.lower() not in ("host", "content-length")
    ]
    out = lib.Request(request.method, url, headers=kept, content=content, extensions=dict(request.extensions))
    for name, value in (headers or {}).items():
        out.headers[name] = value
    return out


class LimitedTransport(_Base):
    """An httpx (or httpx2) transport limited by llmctl; see the module's documentation.

    ``key``: the quota's name, a string (``"{model}"`` in it is replaced by the request's model)
    or a function of the model name returning the key. Or, instead of ``key``, ``route_group``:
    the daemon grants a member of that configured group, and ``route(request, key)`` (optional)
    returns the request to send for the member granted (see `reroute`). ``client``: a
    `llmctl.Client` (default: one on the default socket, fail open). ``inner``: the transport
    that sends (default: the request's library's ``HTTPTransport()``). ``max_wait``: how long an
    acquire may wait (default: up to an hour). ``profile``: the retry profile of the advice.
    ``on_advice(request, advice)`` is called after every report.
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
        max_retries: int = 0,
        image_tokens: int = IMAGE_TOKENS,
        default_output_tokens: int = DEFAULT_OUTPUT_TOKENS,
        on_advice: Optional[AdviceHook] = None,
        profile: Optional[str] = None,
        route_group: Optional[str] = None,
        route: Optional[RouteHook] = None,
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
            profile=profile,
            route_group=route_group,
            route=route,
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
        plan = self._plan(est)
        while True:
            lease = self.client.acquire(plan.key, **self._acquire_args(est, plan))
            plan.sends += 1
            if plan.first is None:
                plan.first = time.time()
            try:
                to_send = self._routed(request, lease)
            except BaseException:
                # Nothing was sent: the lease goes back as an unknown outcome, and no retry.
                self._report(request, lease, _not_sent())
                raise
            try:
                response = inner.handle_request(to_send)
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
            if _is_event_stream(response) and 200 <= response.status_code < 300:
                self._watch(lib, request, lease, response)
                return response
            try:
                response.read()
            except BaseException as exc:
                self._report(request, lease, from_exception(exc))
                raise
            advice = self._report(
                request,
                lease,
                from_http(response.status_code, response.headers, response.content),
                response,
            )
            delay = self._again(plan, advice)
            if delay is not None:
                response.close()
                time.sleep(delay)
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
            self._report(request, lease, watcher.outcome(exc), response)

        response.stream = _reporting_stream(lib, False)(response.stream, watcher, done)

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

    def __enter__(self) -> "LimitedTransport":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncLimitedTransport(_Base):
    """`LimitedTransport` for ``httpx.AsyncClient`` / ``httpx2.AsyncClient``, with a
    `llmctl.AsyncClient`."""

    def __init__(
        self,
        key: Optional[KeyArg] = None,
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
        profile: Optional[str] = None,
        route_group: Optional[str] = None,
        route: Optional[RouteHook] = None,
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
            profile=profile,
            route_group=route_group,
            route=route,
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
        plan = self._plan(est)
        while True:
            lease = await self.client.acquire(plan.key, **self._acquire_args(est, plan))
            plan.sends += 1
            if plan.first is None:
                plan.first = time.time()
            try:
                to_send = self._routed(request, lease)
            except BaseException:
                # Nothing was sent: the lease goes back as an unknown outcome, and no retry.
                await self._report(request, lease, _not_sent())
                raise
            try:
                response = await inner.handle_async_request(to_send)
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
            if _is_event_stream(response) and 200 <= response.status_code < 300:
                self._watch(lib, request, lease, response)
                return response
            try:
                await response.aread()
            except BaseException as exc:
                await self._report(request, lease, from_exception(exc))
                raise
            advice = await self._report(
                request,
                lease,
                from_http(response.status_code, response.headers, response.content),
                response,
            )
            delay = self._again(plan, advice)
            if delay is not None:
                await response.aclose()
                await asyncio.sleep(delay)
                continue
            return response

    def _watch(self, lib: ModuleType, request: Any, lease: AsyncLease, response: Any) -> None:
        watcher = StreamWatcher(response.status_code, response.headers)
        finished: List[bool] = []

        async def done(exc: Optional[BaseException]) -> None:
            if finished:
                return
            finished.append(True)
            await self._report(request, lease, watcher.outcome(exc), response)

        response.stream = _reporting_stream(lib, True)(response.stream, watcher, done)

    async def _report(
        self, request: Any, lease: AsyncLease, outcome: Outcome, response: Any = None
    ) -> Optional[Advice]:
        try:
            advice = await lease.report_outcome(outcome)
        except LlmctlError as e:
            logger.warning("llmctl: could not report lease %s on %r: %s", lease.lease_id, lease.key, e)
            return None
        except asyncio.CancelledError:
            raise
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

    async def __aenter__(self) -> "AsyncLimitedTransport":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
