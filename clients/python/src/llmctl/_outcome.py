"""Reading what happened to a provider call from whatever the caller has: an httpx or requests
response, an openai/anthropic SDK result or raw response, an SDK exception, or a JSON body.

Nothing here imports httpx, requests or the SDKs: objects are recognised by their shape."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Optional, Tuple

from ._common import Outcome, limit_headers

Usage = Tuple[int, int, int]  # all input (cached included), cached input, output


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(v: Any) -> Optional[int]:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return max(0, v)
    if isinstance(v, float) and v == v:
        return max(0, int(v))
    return None


def parse_usage(u: Any) -> Optional[Usage]:
    """Usage in any provider's shape, as (all input, cached input, output).

    OpenAI chat: ``prompt_tokens`` counts all input, ``prompt_tokens_details.cached_tokens`` the
    cached part. Anthropic: ``input_tokens`` excludes cache reads and writes, so all input is
    ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens`` and the cached part is
    ``cache_read_input_tokens``. OpenAI Responses: ``input_tokens`` (all) with
    ``input_tokens_details.cached_tokens``. Gemini: ``promptTokenCount`` and friends.
    """
    if u is None:
        return None
    prompt = _int(_get(u, "prompt_tokens"))
    if prompt is not None:
        cached = _int(_get(_get(u, "prompt_tokens_details"), "cached_tokens")) or 0
        completion = _int(_get(u, "completion_tokens")) or 0
        return prompt, min(cached, prompt), completion
    for p, c, o in (
        ("promptTokenCount", "cachedContentTokenCount", "candidatesTokenCount"),
        ("prompt_token_count", "cached_content_token_count", "candidates_token_count"),
    ):
        gp = _int(_get(u, p))
        if gp is not None:
            gc = _int(_get(u, c)) or 0
            # Thinking tokens are output too (billed as such), beside the candidates'.
            thoughts = _int(_get(u, "thoughtsTokenCount")) or _int(_get(u, "thoughts_token_count")) or 0
            return gp, min(gc, gp), (_int(_get(u, o)) or 0) + thoughts
    maybe_in = _int(_get(u, "input_tokens"))
    out = _int(_get(u, "output_tokens"))
    if maybe_in is None and out is None:
        return None
    inp = maybe_in or 0
    read = _int(_get(u, "cache_read_input_tokens"))
    written = _int(_get(u, "cache_creation_input_tokens"))
    if read is not None or written is not None:
        return inp + (read or 0) + (written or 0), read or 0, out or 0
    cached = _int(_get(_get(u, "input_tokens_details"), "cached_tokens")) or 0
    return inp, min(cached, inp), out or 0


def error_info(body: Any) -> Tuple[str, str]:
    """(error type, message) from a provider's error body, or ("", "") when it names none.

    OpenAI ``{"error": {"type", "code", "message"}}`` (the code, when it is a string, is the more
    precise: ``insufficient_quota``, ``rate_limit_exceeded``), Anthropic ``{"type": "error",
    "error": {"type", "message"}}``, Gemini ``{"error": {"status", "message"}}``; also the inner
    error object alone, as the SDKs keep it."""
    if not isinstance(body, Mapping):
        return "", ""
    err = body.get("error")
    if not isinstance(err, Mapping):
        t = body.get("type")
        if t == "error" or "code" in body or (isinstance(t, str) and t.endswith("_error")):
            err = body
        else:
            return "", ""
    code, typ, status = err.get("code"), err.get("type"), err.get("status")
    etype = ""
    for candidate in (code, typ, status):
        if isinstance(candidate, str) and candidate and candidate != "error":
            etype = candidate
            break
    message = err.get("message")
    text = message if isinstance(message, str) else ""
    return etype, text + _details(err.get("details")) + _resets(err)


def _resets(err: Mapping[str, Any]) -> str:
    """Codex's plan reset beside its message (``resets_at``, ``resets_in_seconds``), as
    `` [resets_at=…; resets_in_seconds=…]`` in whole seconds (the daemon reads until when a plan
    window is closed from it); "" when there is none."""
    parts = []
    for k in ("resets_at", "resets_in_seconds"):
        v = err.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0:
            parts.append(f"{k}={math.floor(v)}")
    return f" [{'; '.join(parts)}]" if parts else ""


def _details(details: Any) -> str:
    """What Gemini puts beside its message in ``details``: the quota's id (``…PerDay…`` or
    ``…PerMinute…``) and the retry delay, as `` [quotaId=…; retryDelay=20s]`` (the daemon reads
    whether a refusal is per day from it); "" when there is none."""
    if not isinstance(details, list):
        return ""
    parts = []
    for d in details[:8]:
        if not isinstance(d, Mapping):
            continue
        violations = d.get("violations")
        for v in violations[:8] if isinstance(violations, list) else []:
            qid = v.get("quotaId") if isinstance(v, Mapping) else None
            if isinstance(qid, str) and qid:
                parts.append(f"quotaId={qid[:128]}")
        delay = d.get("retryDelay")
        if isinstance(delay, str) and delay:
            parts.append(f"retryDelay={delay[:32]}")
    return f" [{'; '.join(parts)}]" if parts else ""


def _json_body(content: Any) -> Any:
    if isinstance(content, (bytes, bytearray)):
        if not content:
            return None
        try:
            return json.loads(content)
        except ValueError:
            return None
    return content


def from_http(status: int, headers: Any, body: Any, *, usage: bool = True) -> Outcome:
    """An outcome from an HTTP answer: status, headers, and the JSON body (bytes or parsed)."""
    data = _json_body(body)
    out = Outcome(status=int(status), headers=limit_headers(headers))
    etype, message = error_info(data)
    out.error_type, out.error_message = etype, message
    if usage and isinstance(data, Mapping):
        u = parse_usage(data.get("usage") or data.get("usageMetadata"))
        if u is not None:
            out.input_tokens, out.cached_input_tokens, out.output_tokens = u
            out.usage_known = True
    return out


def _response_body(resp: Any) -> Any:
    """The JSON body of an httpx or requests response if it was read already; never reads it."""
    if getattr(resp, "_content_consumed", True) is False:  # requests, body not read yet
        return None
    try:
        return resp.json()
    except Exception:
        return None


def _is_http_response(obj: Any) -> bool:
    return isinstance(getattr(obj, "status_code", None), int) and hasattr(obj, "headers")


def _class_names(exc: BaseException) -> Tuple[str, ...]:
    return tuple(c.__name__ for c in type(exc).__mro__)


_TIMEOUT_NAMES = {"TimeoutError", "TimeoutException", "Timeout", "APITimeoutError", "ReadTimeout"}
_CONNECTION_NAMES = {
    "ConnectionError",
    "APIConnectionError",
    "TransportError",
    "NetworkError",
    "RemoteProtocolError",
    "ProtocolError",
}


def from_exception(exc: BaseException) -> Outcome:
    """An outcome from an exception raised by the call: the HTTP status when the exception carries
    a response (SDK ``APIStatusError``, ``httpx.HTTPStatusError``, ``requests.HTTPError``), an
    error inside a streamed 200 (the SDKs' stream errors), else status 0 with the error type
    ``timeout``, ``connection``, ``cancelled`` or the exception's class name."""
    status = _int(getattr(exc, "status_code", None))
    response = getattr(exc, "response", None)
    if status is None and response is not None:
        status = _int(getattr(response, "status_code", None))
    body = getattr(exc, "body", None)
    if status:
        out = from_http(status, getattr(response, "headers", None), None, usage=False)
        etype, message = error_info(body)
        if not etype and response is not None:
            etype, message = error_info(_response_body(response))
        if not etype:
            for attr in ("code", "type"):
                v = getattr(exc, attr, None)
                if isinstance(v, str) and v:
                    etype = v
                    break
        out.error_type, out.error_message = etype, message or str(exc)
        if 200 <= status < 300 and not out.error_type:
            out.error_type = "stream_error"
        return out
    etype, message = error_info(body)
    if etype:
        # An SDK's error event inside a streamed 200 (openai raises it without a status).
        return Outcome(status=200, headers={}, error_type=etype, error_message=message or str(exc))
    names = _class_names(exc)
    if any(n in _TIMEOUT_NAMES for n in names):
        etype = "timeout"
    elif any(n in _CONNECTION_NAMES for n in names) or any(n.startswith("Connect") for n in names):
        etype = "connection"
    elif any(n in ("CancelledError", "KeyboardInterrupt", "GeneratorExit") for n in names):
        etype = "cancelled"
    else:
        etype = type(exc).__name__
    return Outcome(status=0, headers={}, error_type=etype, error_message=str(exc))


def from_object(obj: Any) -> Outcome:
    """An outcome from anything `Lease.report_response` accepts."""
    if isinstance(obj, BaseException):
        return from_exception(obj)
    http = getattr(obj, "http_response", None)
    if http is not None and callable(getattr(obj, "parse", None)):
        # An SDK raw response (``with_raw_response``): status and headers from HTTP, usage from
        # the parsed result.
        out = from_http(http.status_code, http.headers, _response_body(http))
        if out.usage_known is None and 200 <= out.status < 300:
            try:
                parsed = obj.parse()
            except Exception:
                parsed = None
            u = parse_usage(_get(parsed, "usage"))
            if u is not None:
                out.input_tokens, out.cached_input_tokens, out.output_tokens = u
                out.usage_known = True
        return out
    if _is_http_response(obj):
        return from_http(obj.status_code, obj.headers, _response_body(obj))
    usage = _get(obj, "usage")
    if usage is None and isinstance(obj, Mapping):
        usage = obj.get("usageMetadata")
    if usage is None:
        usage = _get(obj, "usage_metadata")
    if usage is not None or isinstance(obj, Mapping):
        if isinstance(obj, Mapping):
            etype, message = error_info(obj)
            if etype:
                return Outcome(status=200, headers={}, error_type=etype, error_message=message)
        out = Outcome(status=200, headers={})
        u = parse_usage(usage)
        if u is not None:
            out.input_tokens, out.cached_input_tokens, out.output_tokens = u
            out.usage_known = True
        return out
    raise TypeError(
        "report_response() takes an httpx or requests response, an openai or anthropic result "
        f"(with .usage) or raw response, an exception, or a JSON dict; got {type(obj).__name__}"
    )
