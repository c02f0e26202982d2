"""Amazon Bedrock through boto3, limited by llmctl.

    import boto3
    import llmctl.aws

    bedrock = llmctl.aws.limit(boto3.client("bedrock-runtime"), key="bedrock/{model}")
    bedrock.converse(modelId="anthropic.claude-sonnet-4-5", messages=[...],
                     inferenceConfig={"maxTokens": 512})

boto3 sends through botocore, not httpx, and signs every request, so neither the transports of
`llmctl.httpx` nor the proxy can stand in front of it. `limit` hooks botocore's own events on a
``bedrock-runtime`` client instead, for ``Converse``, ``ConverseStream``, ``InvokeModel`` and
``InvokeModelWithResponseStream``:

- before each attempt is signed, a lease is acquired on the key (``{model}``: the model or
  inference-profile id from the request's path; ``{region}``: the client's region), estimated
  from the request's body (messages, system, ``inferenceConfig.maxTokens`` or ``max_tokens``);
  a refusal is raised as the client's own ``ThrottlingException`` (``error.response["llmctl"]``
  says why), so code that handles Bedrock's throttles handles it;
- after each attempt the lease is reported with the status, the error's code and message and the
  usage (``usage`` of a Converse answer, the token-count headers of InvokeModel, the ``metadata``
  event or the invocation metrics of a stream, as the caller reads it);
- botocore's own retries (3 attempts in its standard mode, 5 in legacy, on its own backoff)
  give way to the daemon's advice: an attempt is retried when, and after the delay, the daemon
  says, within ``max_retries``. One retry layer, which every process on the host shares.
  botocore's own handler still runs beside it (in standard mode it spends the client's retry
  quota on refusals, which then stops retries of the client's other, unlimited operations), and
  its adaptive mode adds a rate limiter of its own: use the standard or legacy mode. botocore
  before 1.43.3 cannot be told "do not retry" (it took any answer for a delay); there its own
  retries apply to errors beside the daemon's, each attempt still limited and reported, and
  `limit` warns once (``pip install "llmctl-client[aws]"`` brings a botocore that can).

Other operations pass untouched. The client is returned, hooked; ``limit`` on a client already
hooked changes nothing.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple, Union

from . import _errors as errors
from ._bedrock import headers_usage as _headers_usage
from ._bedrock import metrics_usage as _metrics_usage
from ._bedrock import stream_error_status as _stream_error_status
from ._bedrock import usage_of as _usage_of
from ._client import Client, Lease
from ._common import Advice, Outcome, Seconds, limit_headers, logger
from ._estimate import DEFAULT_OUTPUT_TOKENS, IMAGE_TOKENS, Estimate, estimate_body
from ._transport import check_key_template, check_retry_settings

__all__ = ["limit", "LIMITED_OPERATIONS"]

# The Bedrock runtime calls that spend a model's quota.
LIMITED_OPERATIONS = frozenset({"Converse", "ConverseStream", "InvokeModel", "InvokeModelWithResponseStream"})
_STREAMING = frozenset({"ConverseStream", "InvokeModelWithResponseStream"})
_SERVICE = "bedrock-runtime"
# Where a request's state lives in botocore's per-call context.
_CONTEXT = "llmctl"
_MARK = "_llmctl_limited"

KeyArg = Union[str, Callable[[str], str]]
AdviceHook = Callable[[str, Advice], None]


class _Call:
    """One call's state across its attempts (botocore keeps the context per call)."""

    def __init__(self) -> None:
        self.lease: Optional[Lease] = None
        self.sends = 0
        self.attempt = 1
        self.first: Optional[float] = None
        self.estimate: Optional[Estimate] = None
        self.key = ""


def _model_of(url: str) -> str:
    """The model (or inference profile, or ARN) named in a Bedrock runtime path:
    ``/model/{modelId}/converse`` and the like."""
    path = urllib.parse.urlsplit(url).path
    _, sep, rest = path.partition("/model/")
    if not sep:
        return ""
    return urllib.parse.unquote(rest.split("/", 1)[0])


def _body_bytes(body: Any) -> bytes:
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode()
    read, seek, tell = (getattr(body, n, None) for n in ("read", "seek", "tell"))
    if callable(read) and callable(seek) and callable(tell):
        at = tell()
        try:
            data = read()
        finally:
            seek(at)
        return data if isinstance(data, bytes) else b""
    return b""


def _outcome(operation: str, response: Any, caught: Optional[BaseException]) -> Outcome:
    """What one attempt came to, from botocore's ``needs-retry`` arguments."""
    if caught is not None or response is None:
        name = type(caught).__name__ if caught is not None else "unknown"
        lowered = name.lower()
        kind = "timeout" if "timeout" in lowered else "connection" if "connect" in lowered else name
        return Outcome(status=0, headers={}, error_type=kind, error_message=str(caught or ""))
    http, parsed = response
    status = int(getattr(http, "status_code", 0) or 0)
    headers = dict(getattr(http, "headers", {}) or {})
    out = Outcome(status=status, headers=limit_headers(headers))
    error = parsed.get("Error") if isinstance(parsed, Mapping) else None
    if status >= 300 and isinstance(error, Mapping):
        out.error_type = str(error.get("Code") or "")
        out.error_message = str(error.get("Message") or parsed.get("message") or "")
    if 200 <= status < 300:
        if operation == "Converse":
            u = _usage_of(parsed)
        else:
            u = _headers_usage(headers)
        if u is not None:
            out.input_tokens, out.cached_input_tokens, out.output_tokens = u
            out.usage_known = True
    return out


# botocore reads a needs-retry handler's answer: None is "no opinion" (the next handler, or no
# retry); since 1.43.3 False is "do not retry" too; before it, any answer but None was a delay to
# sleep before sending again, so False sent every call again, forever.
FALSE_IS_NO_RETRY_SINCE = (1, 43, 3)


def no_retry_answer(botocore_version: str) -> Optional[bool]:
    """How to say "do not retry" to this botocore: False where it reads it so (botocore's own
    retry handler, after llmctl's, is then not asked), else None (botocore's handler decides,
    each attempt it sends still acquired and reported)."""
    parts = []
    for p in botocore_version.split(".")[:3]:
        digits = "".join(c for c in p if c.isdigit()) if p else ""
        parts.append(int(digits) if digits else 0)
    while len(parts) < 3:
        parts.append(0)
    return False if tuple(parts) >= FALSE_IS_NO_RETRY_SINCE else None


def _botocore_version() -> str:
    try:
        import botocore

        return str(getattr(botocore, "__version__", "0"))
    except ImportError:
        return "0"


class _Limiter:
    """The handlers `limit` registers on one client."""

    def __init__(
        self,
        client: Any,
        key: KeyArg,
        llmctl: Optional[Client],
        socket: Any,
        priority: int,
        max_wait: Optional[Seconds],
        run_id: Optional[str],
        max_retries: Optional[int],
        profile: Optional[str],
        on_advice: Optional[AdviceHook],
        image_tokens: int,
        default_output_tokens: int,
    ) -> None:
        self._aws = client
        self.region = getattr(client.meta, "region_name", None) or ""
        self.key = key
        self.priority = priority
        self.max_wait = max_wait
        self.run_id = run_id
        self.max_retries = max_retries
        self.profile = profile
        self.on_advice = on_advice
        self.image_tokens = image_tokens
        self.default_output_tokens = default_output_tokens
        self._llmctl = llmctl
        self._socket = socket
        self._lock = threading.Lock()
        self.no_retry = no_retry_answer(_botocore_version())

    @property
    def client(self) -> Client:
        if self._llmctl is None:
            with self._lock:
                if self._llmctl is None:
                    self._llmctl = Client(self._socket)
        return self._llmctl

    def _key_for(self, model: str) -> str:
        if callable(self.key):
            return self.key(model)
        return self.key.replace("{model}", model or "unknown").replace("{region}", self.region or "unknown")

    def _call(self, context: Any) -> Optional[_Call]:
        if not isinstance(context, dict):
            return None
        call = context.get(_CONTEXT)
        if call is None:
            call = _Call()
            context[_CONTEXT] = call
        return call if isinstance(call, _Call) else None

    # before-sign: every attempt, before it is signed and sent.
    def before_sign(self, request: Any = None, operation_name: str = "", **_: Any) -> None:
        if operation_name not in LIMITED_OPERATIONS or request is None:
            return
        call = self._call(getattr(request, "context", None))
        if call is None:
            return
        if call.estimate is None:
            est = estimate_body(
                _body_bytes(request.body),
                image_tokens=self.image_tokens,
                default_output_tokens=self.default_output_tokens,
            )
            model = _model_of(str(request.url))
            call.estimate = est
            call.key = self._key_for(model)
        est = call.estimate
        if call.lease is not None and not call.lease.reported:
            # Signed again without a send between (a redirect, a refreshed credential).
            return
        try:
            call.lease = self.client.acquire(
                call.key,
                input_tokens=est.input_tokens,
                output_tokens=est.output_tokens,
                output_tokens_declared=est.output_declared,
                priority=self.priority,
                max_wait=self.max_wait,
                run_id=self.run_id,
                profile=self.profile,
                attempt=call.attempt,
                first_attempt=call.first,
            )
        except errors.NeverFits as e:
            raise self._throttled(operation_name, call.key, e, never=True) from e
        except errors.NotGranted as e:
            raise self._throttled(operation_name, call.key, e) from e
        call.sends += 1
        if call.first is None:
            call.first = time.time()

    def _throttled(
        self, operation: str, key: str, e: errors.LlmctlError, never: bool = False
    ) -> BaseException:
        """The client's own exception for a lease the daemon would not grant in time: a
        ThrottlingException (429), or a ValidationException (400) for a call that can never fit
        (its reason ``too_large``), so that code retrying throttles does not retry it forever."""
        never = never or getattr(e, "reason_code", "") == "too_large"
        code, status = ("ValidationException", 400) if never else ("ThrottlingException", 429)
        response: Dict[str, Any] = {
            "Error": {"Code": code, "Message": f"llmctl: not granted on {key}: {e}"},
            "ResponseMetadata": {"HTTPStatusCode": status},
            "message": f"llmctl: not granted on {key}: {e}",
            "llmctl": {
                "key": key,
                "reason": getattr(e, "reason", str(e)),
                "reason_code": "too_large" if never else getattr(e, "reason_code", ""),
                "not_before": getattr(e, "not_before", None),
            },
        }
        cls = getattr(getattr(self._aws, "exceptions", None), code, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            modeled: BaseException = cls(response, operation)
            return modeled
        from botocore.exceptions import ClientError

        err: BaseException = ClientError(response, operation)
        return err

    def _report(self, call: _Call, outcome: Outcome) -> Optional[Advice]:
        lease = call.lease
        if lease is None or lease.reported:
            return None
        try:
            advice = lease.report_outcome(outcome)
        except errors.LlmctlError as e:
            logger.warning("llmctl: could not report lease %s on %r: %s", lease.lease_id, lease.key, e)
            return None
        if self.on_advice is not None:
            try:
                self.on_advice(lease.key, advice)
            except Exception:
                logger.exception("llmctl: the on_advice hook raised")
        return advice

    # needs-retry: after every attempt; the first handler with an answer decides botocore's retry.
    def needs_retry(
        self,
        response: Any = None,
        attempts: int = 1,
        caught_exception: Optional[BaseException] = None,
        request_dict: Any = None,
        operation: Any = None,
        **_: Any,
    ) -> Union[float, bool, None]:
        """A delay to retry after, or `no_retry`."""
        name = getattr(operation, "name", "")
        if name not in LIMITED_OPERATIONS or not isinstance(request_dict, dict):
            return None
        call = self._call(request_dict.get("context"))
        if call is None or call.lease is None:
            return None
        outcome = _outcome(name, response, caught_exception)
        if name in _STREAMING and 200 <= outcome.status < 300:
            # Reported as the caller reads the stream (after-call wraps it).
            return self.no_retry
        advice = self._report(call, outcome)
        if advice is None or advice.action != "retry":
            return self.no_retry
        if self.max_retries is not None and call.sends > self.max_retries:
            return self.no_retry
        call.attempt += 1
        return max(0.0, advice.retry_after)

    # after-call-error: the call raised before an attempt was answered (credentials that could
    # not be had to sign, an interrupt during the send): a lease taken for it goes back.
    def after_call_error(
        self, exception: Optional[BaseException] = None, context: Any = None, **_: Any
    ) -> None:
        call = context.get(_CONTEXT) if isinstance(context, dict) else None
        if not isinstance(call, _Call) or call.lease is None or call.lease.reported:
            return
        name = type(exception).__name__ if exception is not None else "unreported"
        self._report(
            call, Outcome(status=0, headers={}, error_type="unreported", error_message=f"{name}: {exception}")
        )

    # after-call: the call's answer, once; a stream is watched as the caller reads it.
    def after_call(
        self, http_response: Any = None, parsed: Any = None, model: Any = None, context: Any = None, **_: Any
    ) -> None:
        name = getattr(model, "name", "")
        if name not in _STREAMING or not isinstance(parsed, dict):
            return
        call = self._call(context)
        if call is None or call.lease is None or call.lease.reported:
            return
        status = int(getattr(http_response, "status_code", 0) or 0)
        # ConverseStream's events are its answer's "stream", InvokeModelWithResponseStream's its "body".
        member = "stream" if name == "ConverseStream" else "body"
        if not 200 <= status < 300 or member not in parsed:
            return
        headers = dict(getattr(http_response, "headers", {}) or {})
        parsed[member] = _WatchedStream(
            parsed[member], name, status, headers, lambda o: self._report(call, o)
        )


class _WatchedStream:
    """A Bedrock event stream that reports its lease once the caller has read it (its usage from
    the ``metadata`` event, or the invocation metrics of the last chunk), an error inside it, or
    the caller closing it early."""

    def __init__(
        self,
        inner: Any,
        operation: str,
        status: int,
        headers: Mapping[str, str],
        report: Callable[[Outcome], Any],
    ) -> None:
        self._inner = inner
        self._operation = operation
        self._status = status
        self._headers = limit_headers(headers)
        self._report = report
        self._usage: Optional[Tuple[int, int, int]] = None
        self._started = False
        self._done = False

    def _watch(self, event: Any) -> None:
        if not isinstance(event, Mapping):
            return
        if "metadata" in event and isinstance(event["metadata"], Mapping):
            self._usage = _usage_of(event["metadata"]) or self._usage
        chunk = event.get("chunk")
        if isinstance(chunk, Mapping) and isinstance(chunk.get("bytes"), (bytes, bytearray)):
            try:
                body = json.loads(chunk["bytes"])
            except ValueError:
                body = None
            if isinstance(body, Mapping):
                self._usage = _metrics_usage(body) or self._usage
        if any(k in event for k in ("contentBlockDelta", "chunk")):
            self._started = True

    def _finish(self, exc: Optional[BaseException]) -> None:
        if self._done:
            return
        self._done = True
        out = Outcome(status=self._status, headers=self._headers, stream_started=self._started)
        if exc is not None:
            error = getattr(exc, "response", {}) or {}
            info = error.get("Error", {}) if isinstance(error, Mapping) else {}
            code = str(info.get("Code") or type(exc).__name__)
            out.error_type = code
            out.error_message = str(info.get("Message") or exc)
            # A throttle inside the stream is a rate limit as any other: the status Bedrock
            # gives the same exception as an answer.
            out.status = _stream_error_status(code) or out.status
        if self._usage is not None:
            out.input_tokens, out.cached_input_tokens, out.output_tokens = self._usage
            out.usage_known = True
        elif exc is None:
            out.usage_known = False
        self._report(out)

    def __iter__(self) -> Iterator[Any]:
        try:
            for event in self._inner:
                self._watch(event)
                yield event
        except GeneratorExit:
            # The caller stopped reading (a break, the iterator dropped): what it read stands.
            self._finish(None)
            raise
        except BaseException as exc:
            self._finish(exc)
            raise
        self._finish(None)

    def close(self) -> None:
        try:
            close = getattr(self._inner, "close", None)
            if callable(close):
                close()
        finally:
            self._finish(None)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __del__(self) -> None:
        # Never read to its end nor closed: reported from a thread of its own (a report is a
        # call to the daemon, not for a garbage collector's thread), unless Python is stopping.
        if self._done or sys.is_finalizing():
            return
        try:
            threading.Thread(target=self._finish, args=(None,), daemon=True).start()
        except Exception:
            pass


def limit(
    client: Any,
    key: KeyArg = "bedrock/{model}",
    *,
    llmctl: Optional[Client] = None,
    socket: Any = None,
    priority: int = 0,
    max_wait: Optional[Seconds] = None,
    run_id: Optional[str] = None,
    max_retries: Optional[int] = None,
    profile: Optional[str] = None,
    on_advice: Optional[AdviceHook] = None,
    image_tokens: int = IMAGE_TOKENS,
    default_output_tokens: int = DEFAULT_OUTPUT_TOKENS,
) -> Any:
    """Limits a boto3 ``bedrock-runtime`` client's model calls with llmctl and returns it.

    ``key``: the quota's name; ``{model}`` is replaced by the model or inference-profile id of
    each call and ``{region}`` by the client's region (a function of the model id may be given
    instead). ``llmctl``: the `llmctl.Client` to ask (default: one on ``socket``, else the
    default socket). ``max_retries``: at most that many retries of one call on the daemon's
    advice (default: as the advice says). ``on_advice(key, advice)`` is called after every
    report. The other arguments are those of `llmctl.Client.acquire`.
    """
    meta = getattr(client, "meta", None)
    service = getattr(getattr(meta, "service_model", None), "service_name", None)
    events = getattr(meta, "events", None)
    if service != _SERVICE or events is None:
        raise TypeError(
            f"llmctl.aws.limit takes a boto3 client of {_SERVICE!r} "
            f"(boto3.client({_SERVICE!r})), not {client!r}"
        )
    if llmctl is not None and socket is not None:
        raise TypeError("give llmctl or socket, not both: the client already names its socket")
    if llmctl is not None and not isinstance(llmctl, Client):
        raise TypeError(f"llmctl must be an llmctl.Client, not {llmctl!r}")
    if not (isinstance(key, str) or callable(key)):
        raise TypeError(f"key must be a string or a function of the model id, not {key!r}")
    if isinstance(key, str):
        check_key_template(key.replace("{region}", "region"))
    check_retry_settings(profile, max_retries)
    if getattr(client, _MARK, False):
        return client
    if no_retry_answer(_botocore_version()) is None:
        logger.warning(
            "llmctl: botocore %s cannot be told not to retry (1.43.3 or later can): its own retries "
            "apply to errors beside the daemon's advice; upgrade with pip install 'botocore>=1.43.3'",
            _botocore_version(),
        )
    limiter = _Limiter(
        client,
        key,
        llmctl,
        socket,
        priority,
        max_wait,
        run_id,
        max_retries,
        profile,
        on_advice,
        image_tokens,
        default_output_tokens,
    )
    events.register(f"before-sign.{_SERVICE}", limiter.before_sign, unique_id="llmctl-before-sign")
    # First, so that its answer (retry after the daemon's delay, or not at all) is botocore's.
    events.register_first(f"needs-retry.{_SERVICE}", limiter.needs_retry, unique_id="llmctl-needs-retry")
    events.register(f"after-call.{_SERVICE}", limiter.after_call, unique_id="llmctl-after-call")
    events.register(
        f"after-call-error.{_SERVICE}", limiter.after_call_error, unique_id="llmctl-after-call-error"
    )
    setattr(client, _MARK, True)
    client._llmctl_limiter = limiter
    return client
