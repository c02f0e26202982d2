"""What the httpx transports of `llmctl.httpx` share: their settings, estimating a request,
routing it to the key granted, passing the advice on, and deciding whether to send it again."""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
import sys
import threading
from types import FrameType, ModuleType
from typing import Any, Callable, Dict, Optional, Union

from . import _errors as errors
from . import _eventstream, _stream_usage
from ._common import Advice, Outcome, Seconds, check_key, check_name, logger
from ._estimate import Estimate, estimate_body
from ._lease import LeaseBase
from ._paths import path_call

KeyArg = Union[str, Callable[[str], str]]

# The sync and async HTTP clients a framework object keeps side by side (LangChain's fields,
# LlamaIndex's private attributes), and how far up the caller's frames it is looked for.
_CLIENT_PAIRS = (("http_client", "http_async_client"), ("_http_client", "_async_http_client"))
_FRAMES_SEARCHED = 40
AdviceHook = Callable[[Any, Advice], None]
RouteHook = Callable[[Any, str], Any]


# The libraries whose requests the transports take.
HTTPX_LIBRARIES = ("httpx", "httpx2")


def library(obj: Any) -> ModuleType:
    """The httpx flavour (``httpx`` or ``httpx2``) an object belongs to."""
    return importlib.import_module(type(obj).__module__.split(".")[0])


def is_event_stream(response: Any) -> bool:
    ctype = response.headers.get("content-type", "").lower()
    return "text/event-stream" in ctype or _eventstream.CONTENT_TYPE in ctype


# Which client each transport takes, named in the error for the other kind.
_CLIENT_HINTS = {
    "Client": "AsyncLimitedTransport takes an AsyncClient",
    "AsyncClient": "LimitedTransport takes a Client",
}


def check_client(client: Any, cls: type) -> None:
    """Refuses a client of the wrong kind (a `Client` for the asyncio transport, say)."""
    if client is not None and not isinstance(client, cls):
        raise TypeError(
            f"client must be an llmctl.{cls.__name__} ({_CLIENT_HINTS[cls.__name__]}), not {client!r}"
        )


def not_sent() -> Outcome:
    """The outcome of a lease whose request was never sent (the route hook raised)."""
    return Outcome(status=0, headers={}, error_type="unreported", usage_known=False)


class Plan:
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
        # The send in flight asked for the stream's usage on the caller's behalf.
        self.usage_asked = False
        # The caller's body had a stream_options of its own (a refusal naming it may be of it).
        self.caller_options = False
        # The upstream refused the option for this call: its later sends go as the caller wrote.
        self.usage_refused = False


_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def check_key_template(key: str) -> None:
    """A key template's typos fail now, not at the first request: only ``{model}`` is replaced
    (by the request's model), and what is left must be a key the daemon takes."""
    for found in _PLACEHOLDER.findall(key):
        if found != "{model}":
            raise errors.InvalidArgument(
                f"key {key!r} has the placeholder {found}; only {{model}} is replaced (by the model)"
            )
    rest = key.replace("{model}", "m")
    if "{" in rest or "}" in rest:
        raise errors.InvalidArgument(f"key {key!r} has a lone brace; the one placeholder is {{model}}")
    check_key(rest)


def check_retry_settings(profile: Optional[str], max_retries: Optional[int]) -> None:
    """Refuses a profile that is not a name, and a ``max_retries`` that is not a count."""
    if profile is not None:
        check_name(profile, "profile", "'interactive', 'batch' or one configured in [profiles]")
    if max_retries is not None and (
        isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0
    ):
        raise ValueError(
            f"max_retries = {max_retries!r}: give 0 (no retries), more, or None (as the advice says)"
        )


class TransportBase:
    def __init__(
        self,
        key: Optional[KeyArg],
        inner: Any,
        *,
        priority: int,
        max_wait: Optional[Seconds],
        run_id: Optional[str],
        max_retries: Optional[int],
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
                    "give key or route_group, not both: with a route group the daemon picks the member key"
                )
            check_key(route_group, "route_group")
        elif not (isinstance(key, str) or callable(key)):
            raise TypeError(f"key must be a string or a function of the model name, not {key!r}")
        elif isinstance(key, str):
            check_key_template(key)
        if route is not None and (route_group is None or not callable(route)):
            raise TypeError("route must be a function (request, key) -> request, given with route_group")
        check_retry_settings(profile, max_retries)
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
        # Without an inner transport given, one per library (see _make_ahead).
        self._made: Dict[str, Any] = {}
        self._lock = threading.Lock()
        self._async_checked = False

    def _make_ahead(self, make: Callable[[ModuleType], Any]) -> None:
        """Without an inner transport given, ``make(lib)`` makes the one of a library's requests.
        It is called now, as ``httpx.Client()`` makes its own, for the library most likely used:
        httpx2 when it is imported (only its users import it; the SDKs import httpx), else httpx.
        Its TLS context (the CA bundle read, some 40 ms) is then not the first request's. The
        other library's, if its requests come, is made by the first of them."""
        self._make = make
        if self._inner is not None:
            return
        for name in reversed(HTTPX_LIBRARIES):
            lib = sys.modules.get(name)
            if lib is not None:
                self._inner_for(lib)
                return

    def _inner_for(self, lib: ModuleType) -> Any:
        """The transport that sends: the one given, else the one made for the request's library."""
        if self._inner is not None:
            return self._inner
        made = self._made.get(lib.__name__)
        if made is None:
            with self._lock:
                made = self._made.get(lib.__name__)
                if made is None:
                    made = self._make(lib)
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

    def _acquire_args(self, est: Estimate, plan: Plan) -> Dict[str, Any]:
        return dict(
            input_tokens=est.input_tokens,
            output_tokens=est.output_tokens,
            output_tokens_declared=est.output_declared,
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

    def _warn_if_async_uncovered(self) -> None:
        """Warns once when this (sync) transport serves a framework object whose async calls go
        through a client of its own, unlimited: LangChain's ``ChatOpenAI(http_client=...)``
        without ``http_async_client``, LlamaIndex's ``OpenAI`` without ``async_http_client``.
        Seen from the object the first call came through, in the caller's frames."""
        if self._async_checked:
            return
        self._async_checked = True
        try:
            self._find_uncovered_async(sys._getframe(1))
        except Exception:
            # A look at the caller's objects must never cost the call.
            logger.debug("llmctl: could not look for an async client beside this transport", exc_info=True)

    def _find_uncovered_async(self, frame: Optional[FrameType]) -> None:
        for _ in range(_FRAMES_SEARCHED):
            frame = frame.f_back if frame is not None else None
            if frame is None:
                return
            owner = frame.f_locals.get("self")
            private = getattr(owner, "__pydantic_private__", None)
            plain = getattr(owner, "__dict__", None)
            fields = {
                **(plain if isinstance(plain, dict) else {}),
                **(private if isinstance(private, dict) else {}),
            }
            for sync_name, async_name in _CLIENT_PAIRS:
                sync = fields.get(sync_name)
                if sync is None or async_name not in fields or fields[async_name] is not None:
                    continue
                if getattr(sync, "_transport", None) is self:
                    logger.warning(
                        "llmctl: %s was given %s=... with a LimitedTransport but no %s: its async calls "
                        "(ainvoke, astream, acomplete, ...) go through a client of its own, unlimited; "
                        "give it %s=httpx.AsyncClient(transport=AsyncLimitedTransport(...)) too",
                        type(owner).__name__,
                        sync_name.lstrip("_"),
                        async_name.lstrip("_"),
                        async_name.lstrip("_"),
                    )
                    return

    def _usage_asked(self, request: Any, plan: Plan) -> Any:
        """The request to send: one asking for its stream's usage when the caller did not and
        its upstream has not refused that (``conformance/stream_usage.json``), else as it is."""
        plan.usage_asked = False
        if plan.usage_refused or request.method.upper() != "POST" or _stream_usage.refused_by(request.url):
            return request
        try:
            body = json.loads(request.content)
        except Exception:
            return request
        sent = _stream_usage.ask(request.url.path, body)
        if sent is None:
            return request
        plan.caller_options = isinstance(body.get("stream_options"), dict)
        headers = request.headers.copy()
        headers.pop("content-length", None)
        # The stream is rewritten as it passes, before the client decodes it: ask for it plain.
        headers["accept-encoding"] = "identity"
        lib = library(request)
        asked = lib.Request(
            request.method,
            request.url,
            headers=headers,
            content=json.dumps(sent, separators=(",", ":")).encode(),
            extensions=dict(request.extensions),
        )
        plan.usage_asked = True
        return asked

    def _usage_refused(self, plan: Plan, sent: Any, response: Any) -> bool:
        """Whether ``response`` refuses the usage asked for on the caller's behalf; the upstream
        is then remembered (unless the caller's body had a stream_options of its own, which may
        be what was refused), and the caller's request is to be sent as it came."""
        if not plan.usage_asked:
            return False
        try:
            body = json.loads(response.content)
        except Exception:
            return False
        if not _stream_usage.refuses(response.status_code, body):
            return False
        if not plan.caller_options and _stream_usage.remember_refusal(sent.url):
            logger.warning(
                "llmctl: %s refuses stream_options.include_usage; its streams go as the caller "
                "wrote them and are settled at the estimate",
                _stream_usage.origin(sent.url),
            )
        plan.usage_asked = False
        plan.usage_refused = True
        return True

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
        # The raw path: a model id may hold an encoded slash (an inference profile's ARN).
        call = path_call(request.url.raw_path.decode("ascii", "replace").partition("?")[0])
        if not call.limited:
            return None
        est = estimate_body(
            content, image_tokens=self.image_tokens, default_output_tokens=self.default_output_tokens
        )
        if call.model is not None or (call.stream and not est.stream):
            est = dataclasses.replace(est, model=call.model or est.model, stream=est.stream or call.stream)
        return est

    def _advised(self, request: Any, advice: Optional[Advice], response: Any = None) -> None:
        if advice is not None and response is not None:
            # Where the caller can see it: an SDK's APIStatusError carries this response.
            response.extensions["llmctl_advice"] = advice
        if advice is not None and self.on_advice is not None:
            try:
                self.on_advice(request, advice)
            except Exception:
                logger.exception("llmctl: the on_advice hook raised")

    def _plan(self, est: Estimate) -> Plan:
        return Plan(self._key_for(est), self.route_group)

    def _again(self, plan: Plan, advice: Optional[Advice]) -> Optional[float]:
        """Whether to send the request again after this advice (and after how many seconds),
        within ``max_retries``: on ``retry``, on the same key; on ``fallback``, on the key
        advised, only when a ``route`` hook says how to send the request there."""
        if advice is None or (self.max_retries is not None and plan.sends > self.max_retries):
            return None
        if advice.action == "retry":
            plan.attempt += 1
            return advice.retry_after
        if advice.action == "fallback" and advice.fallback_key and self.route is not None:
            plan.key, plan.route_group = advice.fallback_key, None
            plan.attempt, plan.first = 1, None
            return 0.0
        return None
