"""A stream that omits its usage unless asked (OpenAI-style chat and legacy completions:
``stream_options.include_usage``) is asked for it when the caller did not, and the caller gets
the stream it would have had: the usage-only chunk dropped, the ``usage`` member of the other
chunks removed. An upstream that refuses the option (a 400 naming it) is asked again without it,
and not asked again (``conformance/stream_usage.json``)."""

from __future__ import annotations

import json
import re
import threading
from typing import Any, Dict, List, Optional, Set

_decoder = json.JSONDecoder()
# SSE lines end at \n, \r\n or \r, and nowhere else (str.splitlines also splits at U+2028).
_LINES = re.compile(r"\r\n|\r|\n")

# Origins (scheme, host and port) that answered 400 to stream_options: not asked again.
_refusing: Set[str] = set()
_refusing_lock = threading.Lock()


def ask(path: str, body: Any) -> Optional[Dict[str, Any]]:
    """The body to send instead of ``body`` on ``path``, asking for the stream's usage; ``None``
    when the caller asked already, or the call is not such a stream."""
    path = path.split("?", 1)[0].rstrip("/")
    if not isinstance(body, dict) or not path.endswith("/completions") or body.get("stream") is not True:
        return None
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage") is True:
        return None
    sent = dict(body)
    kept = options if isinstance(options, dict) else {}
    sent["stream_options"] = {**kept, "include_usage": True}
    return sent


def refuses(status: int, body: Any) -> bool:
    """Whether an error answer refuses the option: a 400 or 422 whose error message (or
    parameter, or the error itself when it is a string) names ``stream_options`` (or
    ``include_usage``); an error that only echoes the request back names nothing."""
    if status not in (400, 422) or not isinstance(body, dict):
        return False
    raw = body.get("error")
    error = raw if isinstance(raw, dict) else {}
    said = [error.get("message"), error.get("param"), raw, body.get("message"), body.get("detail")]
    return any(isinstance(s, str) and ("stream_options" in s or "include_usage" in s) for s in said)


def origin(url: Any) -> str:
    return f"{url.scheme}://{url.host}:{url.port or ''}"


def refused_by(url: Any) -> bool:
    with _refusing_lock:
        return origin(url) in _refusing


def remember_refusal(url: Any) -> bool:
    """Remembers that ``url``'s origin refuses the option; True the first time."""
    with _refusing_lock:
        o = origin(url)
        if o in _refusing:
            return False
        _refusing.add(o)
        return True


def without_member(text: str, key: str) -> Optional[str]:
    """``text`` (an object's JSON) without its top-level member ``key``, the rest as it was
    written; ``None`` when it has no such member."""

    def ws(i: int) -> int:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    i = ws(0)
    if text[i : i + 1] != "{":
        return None
    i += 1
    prev_comma: Optional[int] = None
    while True:
        i = ws(i)
        if text[i : i + 1] != '"':
            return None
        member = i
        try:
            name, key_end = _decoder.raw_decode(text, i)
            i = ws(key_end)
            if text[i : i + 1] != ":":
                return None
            _, value_end = _decoder.raw_decode(text, ws(i + 1))
        except ValueError:
            return None
        after = ws(value_end)
        comma = text[after : after + 1] == ","
        if name == key:
            if comma:
                start, end = member, ws(after + 1)
            elif prev_comma is not None:
                start, end = prev_comma, value_end
            else:
                start, end = member, value_end
            return text[:start] + text[end:]
        if not comma:
            return None
        prev_comma = after
        i = after + 1


def _event_out(event: bytes) -> bytes:
    try:
        text = event.decode("utf-8")
    except UnicodeDecodeError:
        return event
    data: List[str] = []
    for line in _LINES.split(text):
        if line.startswith("data:"):
            d = line[5:]
            data.append(d[1:] if d.startswith(" ") else d)
    if len(data) != 1:
        return event
    try:
        chunk = json.loads(data[0])
    except ValueError:
        return event
    if not isinstance(chunk, dict) or "usage" not in chunk:
        return event
    choices = chunk.get("choices")
    if isinstance(choices, list) and not choices and isinstance(chunk["usage"], dict):
        return b""
    if chunk["usage"] is not None:
        return event  # usage a provider puts on a content chunk unasked is the caller's
    rewritten = without_member(data[0], "usage")
    if rewritten is None:
        return event
    return text.replace(data[0], rewritten, 1).encode("utf-8")


class Unasked:
    """The caller's side of a stream whose usage was asked for on its behalf: fed the upstream's
    bytes, it gives back the stream the caller would have had, whole events at a time."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> bytes:
        buf = self._pending + chunk
        out = []
        start = line_start = i = 0
        n = len(buf)
        while i < n:
            c = buf[i]
            if c == 0x0A:
                end = i + 1
            elif c == 0x0D:
                if i + 1 == n:
                    break  # its \n may come in the next chunk
                end = i + 2 if buf[i + 1] == 0x0A else i + 1
            else:
                i += 1
                continue
            if i == line_start:  # a blank line ends an event
                out.append(_event_out(buf[start:end]))
                start = end
            line_start = end
            i = end
        self._pending = buf[start:]
        return b"".join(out)

    def finish(self) -> bytes:
        rest, self._pending = self._pending, b""
        return rest
