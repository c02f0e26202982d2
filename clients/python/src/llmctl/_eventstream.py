"""AWS event-stream frames (``application/vnd.amazon.eventstream``), as Bedrock's
InvokeModelWithResponseStream answers, turned into the (event type, JSON data) pairs the stream
watcher reads: each ``chunk`` event's base64 ``bytes`` are the model's own stream event (an
Anthropic ``message_start``, say), and an exception frame is an error event."""

from __future__ import annotations

import base64
import binascii
import json
import struct
import zlib
from typing import Any, Dict, List, Tuple

CONTENT_TYPE = "application/vnd.amazon.eventstream"
MAX_FRAME = 16 << 20  # the format's own bound on one message
_PRELUDE = 12
# Header value types with a fixed width (the format's types 0-9; 6 and 7 carry a length).
_FIXED = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}


def _headers(raw: bytes) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    i = 0
    while i < len(raw):
        n = raw[i]
        name = raw[i + 1 : i + 1 + n].decode("utf-8", "replace")
        i += 1 + n
        kind = raw[i]
        i += 1
        if kind in (6, 7):
            (size,) = struct.unpack_from(">H", raw, i)
            value: Any = raw[i + 2 : i + 2 + size]
            if kind == 7:
                value = value.decode("utf-8", "replace")
            i += 2 + size
        elif kind in _FIXED:
            value = raw[i : i + _FIXED[kind]]
            i += _FIXED[kind]
        else:
            raise ValueError(f"header type {kind}")
        out[name] = value
    return out


class EventStreamParser:
    """AWS event-stream messages fed in byte chunks of any size; a frame that fails its checksum
    stops the watching (the bytes still reach the caller)."""

    def __init__(self) -> None:
        self._buf = b""
        self.events: List[Tuple[str, str]] = []
        self.broken = False

    def feed(self, chunk: bytes) -> None:
        if self.broken:
            return
        self._buf += chunk
        while len(self._buf) >= _PRELUDE:
            total, header_len, prelude_crc = struct.unpack_from(">III", self._buf)
            if (
                zlib.crc32(self._buf[:8]) != prelude_crc
                or total > MAX_FRAME
                or total < _PRELUDE + header_len + 4
            ):
                self._break()
                return
            if len(self._buf) < total:
                return
            frame, self._buf = self._buf[:total], self._buf[total:]
            if zlib.crc32(frame[:-4]) != struct.unpack_from(">I", frame, total - 4)[0]:
                self._break()
                return
            try:
                headers = _headers(frame[_PRELUDE : _PRELUDE + header_len])
            except (ValueError, IndexError, struct.error):
                self._break()
                return
            self._message(headers, frame[_PRELUDE + header_len : -4])

    def finish(self) -> None:
        pass

    def _break(self) -> None:
        self.broken = True
        self._buf = b""

    def _message(self, headers: Dict[str, Any], payload: bytes) -> None:
        kind = headers.get(":message-type")
        if kind in ("exception", "error"):
            etype = headers.get(":exception-type") or headers.get(":error-code") or "stream_error"
            try:
                message = json.loads(payload).get("message", "")
            except (ValueError, AttributeError):
                message = payload.decode("utf-8", "replace")
            error = {"error": {"type": str(etype), "message": str(message or "")}}
            self.events.append(("error", json.dumps(error)))
            return
        if kind != "event":
            return
        event = str(headers.get(":event-type") or "")
        try:
            body = json.loads(payload) if payload else {}
        except ValueError:
            return
        if event == "chunk" and isinstance(body, dict) and isinstance(body.get("bytes"), str):
            try:
                inner = base64.b64decode(body["bytes"], validate=True)
            except (binascii.Error, ValueError):
                return
            self.events.append(("chunk", inner.decode("utf-8", "replace")))
        else:
            self.events.append((event, json.dumps(body)))
