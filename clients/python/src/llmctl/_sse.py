"""Watching a streamed (server-sent events) answer go by, to report it when it ends: usage from
the final events, an error event inside the 200, and whether output reached the caller first."""

from __future__ import annotations

import codecs
import json
import zlib
from typing import Any, Dict, List, Optional, Tuple

from . import _eventstream
from ._bedrock import metrics_usage
from ._common import Outcome, limit_headers
from ._eventstream import EventStreamParser
from ._outcome import error_info, parse_usage

MAX_PENDING = 1 << 20  # a line longer than this is not an event we can use
# A chat chunk's delta with any of these is output reaching the caller.
_OUTPUT_FIELDS = ("content", "tool_calls", "function_call", "refusal", "reasoning_content")


class EventParser:
    """Server-sent events (the WHATWG rules) fed in byte chunks of any size."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._event = ""
        self._data: List[str] = []
        self.events: List[Tuple[str, str]] = []  # (event type, data)
        self.broken = False

    def feed(self, chunk: bytes) -> None:
        if self.broken:
            return
        self._buf += self._decoder.decode(chunk)
        while True:
            cr, lf = self._buf.find("\r"), self._buf.find("\n")
            if cr < 0 and lf < 0:
                break
            if cr >= 0 and (lf < 0 or cr < lf):
                if cr + 1 == len(self._buf):
                    break  # a \n may follow in the next chunk
                end = cr + 2 if self._buf[cr + 1] == "\n" else cr + 1
                idx = cr
            else:
                idx, end = lf, lf + 1
            line, self._buf = self._buf[:idx], self._buf[end:]
            self._line(line)
        if len(self._buf) > MAX_PENDING:
            self.broken = True
            self._buf = ""

    def finish(self) -> None:
        if self._buf:
            self._line(self._buf.rstrip("\r"))
            self._buf = ""
        self._line("")

    def _line(self, line: str) -> None:
        if not line:
            if self._data:
                self.events.append((self._event or "message", "\n".join(self._data)))
            self._event, self._data = "", []
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)


def _decompressor(encoding: str) -> Any:
    encoding = (encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return False  # an encoding we cannot read: the stream is passed on, not watched


class StreamWatcher:
    """Follows the raw bytes of a streamed answer (OpenAI chat and Responses, Anthropic
    messages, Gemini streamGenerateContent) and says at the end what to report."""

    def __init__(self, status: int, headers: Any) -> None:
        self.status = status
        self.headers = limit_headers(headers)
        get = getattr(headers, "get", None)
        ctype = (get("content-type", "") if get else "").lower()
        self.parser: Any = EventStreamParser() if _eventstream.CONTENT_TYPE in ctype else EventParser()
        self._inflate = _decompressor(get("content-encoding", "") if get else "")
        self.usage: Dict[str, Any] = {}
        # Bedrock's invocation metrics, for a model whose own events carry no usage.
        self.metrics: Optional[Tuple[int, int, int]] = None
        self.output_seen = False
        self.error_type = ""
        self.error_message = ""
        self.error_after_output = False

    def feed(self, chunk: bytes) -> None:
        if self._inflate is False:
            return
        try:
            if self._inflate is not None:
                chunk = self._inflate.decompress(chunk)
        except zlib.error:
            self._inflate = False
            return
        self.parser.feed(chunk)
        if self.parser.events:
            events, self.parser.events = self.parser.events, []
            for event, data in events:
                self._event(event, data)

    def _event(self, event: str, data: str) -> None:
        if data.startswith("[DONE]"):
            return
        try:
            obj = json.loads(data)
        except ValueError:
            return
        if not isinstance(obj, dict):
            return
        typ = obj.get("type")
        kind: str = typ if isinstance(typ, str) else event
        err: Any = None
        if isinstance(obj.get("error"), dict):
            err = obj  # OpenAI chat chunk or Anthropic error event: {"error": {...}}
        elif kind == "error" or event == "error":
            err = {"error": obj}  # Responses API error event: code and message at the top
        elif kind == "response.failed":
            resp = obj.get("response")
            inner = resp.get("error") if isinstance(resp, dict) else None
            if not isinstance(inner, dict):
                inner = {"code": "response_failed"}
            err = {"error": inner}
        if err is not None:
            if not self.error_type:
                etype, message = error_info(err)
                self.error_type = etype or "stream_error"
                self.error_message = message
                self.error_after_output = self.output_seen
            return
        self.metrics = metrics_usage(obj) or self.metrics
        for holder in (obj, obj.get("message"), obj.get("response")):
            for name in ("usage", "usageMetadata"):  # usageMetadata: Gemini's
                u = holder.get(name) if isinstance(holder, dict) else None
                if isinstance(u, dict):
                    self.usage.update({k: v for k, v in u.items() if v is not None})
        if not self.output_seen and self._is_output(kind, obj):
            self.output_seen = True

    @staticmethod
    def _is_output(kind: str, obj: Dict[str, Any]) -> bool:
        if kind == "content_block_delta" or (kind.startswith("response.") and kind.endswith(".delta")):
            return True
        choices = obj.get("choices")
        if isinstance(choices, list):
            for ch in choices:
                delta = ch.get("delta") if isinstance(ch, dict) else None
                if isinstance(delta, dict) and any(delta.get(k) for k in _OUTPUT_FIELDS):
                    return True
                if isinstance(ch, dict) and ch.get("text"):  # legacy completions
                    return True
        candidates = obj.get("candidates")  # Gemini
        if isinstance(candidates, list):
            for cand in candidates:
                content = cand.get("content") if isinstance(cand, dict) else None
                parts = content.get("parts") if isinstance(content, dict) else None
                if isinstance(parts, list) and any(isinstance(p, dict) and p for p in parts):
                    return True
        return False

    def outcome(self, exc: Optional[BaseException] = None) -> Outcome:
        """What to report once the stream has ended (or broke with ``exc``)."""
        if exc is None:
            self.parser.finish()
            for event, data in self.parser.events:
                self._event(event, data)
            self.parser.events = []
        out = Outcome(status=self.status, headers=self.headers)
        u = parse_usage(self.usage) if self.usage else self.metrics
        if u is not None:
            out.input_tokens, out.cached_input_tokens, out.output_tokens = u
            out.usage_known = True
        if self.error_type:
            out.error_type, out.error_message = self.error_type, self.error_message
            out.stream_started = self.error_after_output
        elif exc is not None:
            from ._outcome import from_exception

            broke = from_exception(exc)
            out.error_type = broke.error_type or "connection"
            out.error_message = broke.error_message
            out.stream_started = self.output_seen
        return out
