"""Estimating what a provider request will use, from its JSON body, before it is sent.

The heuristic (documented in the README): input tokens are the characters of the request's text
divided by 4, rounded up, plus 3 per message and a fixed cost per image (or other media part);
text is every string under ``messages``, ``system``, ``prompt``, ``input``, ``instructions``,
``contents`` and ``tools``, apart from structural fields (type, role, ids). Output tokens are
``max_tokens``, ``max_completion_tokens`` or ``max_output_tokens`` (or Gemini's
``generationConfig.maxOutputTokens``, Bedrock Converse's ``inferenceConfig.maxTokens``; times
``n`` choices), else a default, and then the request is marked as declaring none
(``output_declared``), so the daemon reserves what answers on the key produced lately instead
and settles at what it produces. The
daemon settles each lease with the provider's real usage afterwards, so the estimate only has to
be close, and erring high is safe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 3
IMAGE_TOKENS = 1000
DEFAULT_OUTPUT_TOKENS = 4096

_TEXT_FIELDS = ("messages", "system", "prompt", "input", "instructions", "contents", "tools", "functions")
_SKIP_KEYS = frozenset(
    {"type", "role", "id", "tool_use_id", "tool_call_id", "call_id", "cache_control", "signature", "status"}
)
_MEDIA_WORDS = ("image", "audio", "file", "document")
# Bedrock Converse's media blocks are keyed by their kind, and always have a source:
# {"image": {"format": ..., "source": ...}} (a JSON schema's property named image has none).
_MEDIA_KEYS = ("image", "document", "video", "audio")


@dataclass(frozen=True)
class Estimate:
    model: str
    input_tokens: int
    output_tokens: int
    stream: bool
    # False when the body names no output bound (max_tokens and its kin).
    output_declared: bool = True


class _Counter:
    def __init__(self) -> None:
        self.chars = 0
        self.media = 0

    def walk(self, v: Any, depth: int = 0) -> None:
        if depth > 64:
            return
        if isinstance(v, str):
            self.chars += len(v)
        elif isinstance(v, list):
            for x in v:
                self.walk(x, depth + 1)
        elif isinstance(v, dict):
            kind = v.get("type")
            if isinstance(kind, str) and any(w in kind for w in _MEDIA_WORDS):
                self.media += 1
                return
            if "inline_data" in v or "inlineData" in v:  # Gemini media
                self.media += 1
                return
            if any(isinstance(v.get(k), dict) and "source" in v[k] for k in _MEDIA_KEYS):  # Bedrock
                self.media += 1
                return
            for k, x in v.items():
                if k not in _SKIP_KEYS:
                    self.walk(x, depth + 1)


def _whole(v: Any) -> Optional[int]:
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return v
    return None


def estimate_body(
    body: Any,
    *,
    image_tokens: int = IMAGE_TOKENS,
    default_output_tokens: int = DEFAULT_OUTPUT_TOKENS,
) -> Estimate:
    """An estimate for a request body (a dict, or JSON bytes/str)."""
    if isinstance(body, (bytes, bytearray, str)):
        try:
            body = json.loads(body) if body else {}
        except ValueError:
            body = {}
    if not isinstance(body, dict):
        body = {}
    c = _Counter()
    messages = body.get("messages")
    n_messages = len(messages) if isinstance(messages, list) else 0
    for field in _TEXT_FIELDS:
        if field in body:
            c.walk(body[field])
    input_tokens = -(-c.chars // CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * n_messages + image_tokens * c.media
    output = None
    for field in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        output = _whole(body.get(field))
        if output is not None:
            break
    if output is None:
        gen = body.get("generationConfig") or body.get("generation_config")
        if isinstance(gen, dict):
            output = _whole(gen.get("maxOutputTokens") or gen.get("max_output_tokens"))
    if output is None:
        inference = body.get("inferenceConfig")  # Bedrock Converse
        if isinstance(inference, dict):
            output = _whole(inference.get("maxTokens"))
    declared = output is not None
    if output is None:
        output = default_output_tokens
    choices = _whole(body.get("n"))
    if choices and choices > 1:
        output *= choices
    model = body.get("model")
    return Estimate(
        model=model if isinstance(model, str) else "",
        input_tokens=max(1, input_tokens),
        output_tokens=output,
        stream=body.get("stream") is True,
        output_declared=declared,
    )
