"""What a request's path says about the call (``conformance/paths.json``): clouds name the model
in the path, not the body (Bedrock's ``/model/{id}/invoke``, Gemini's and Vertex AI's
``.../models/{model}:generateContent``, Azure OpenAI's ``/openai/deployments/{name}/...``), some
paths ask for a stream, and token counting is not a call to limit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional
from urllib.parse import unquote

# Bedrock runtime operations, and whether each streams.
_BEDROCK_OPS = {
    "invoke": False,
    "invoke-with-response-stream": True,
    "converse": False,
    "converse-stream": True,
}
# Methods on a Google-style model resource that generate nothing.
_COUNTING_METHODS = frozenset({"countTokens", "computeTokens"})
# Vertex AI's Claude token counting is a model of its own.
_COUNTING_MODELS = frozenset({"count-tokens"})
_COUNTING_SUFFIXES = ("/count_tokens", "/responses/input_tokens")
_MALFORMED_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _decoded(s: str) -> str:
    """``%XX`` escapes decoded; a malformed escape, or bytes that are not UTF-8, leave ``s`` as
    it is."""
    if _MALFORMED_ESCAPE.search(s):
        return s
    try:
        return unquote(s, errors="strict")
    except UnicodeDecodeError:
        return s


@dataclass(frozen=True)
class PathCall:
    limited: bool
    model: Optional[str]  # None: the path names none (the body's model is the one)
    stream: bool  # True: the path asks for a stream


def path_call(path: str) -> PathCall:
    """The call a request's path (without its query) names."""
    path = path.rstrip("/")
    if path.endswith(_COUNTING_SUFFIXES):
        return PathCall(False, None, False)
    head, sep, rest = path.rpartition("/model/")
    if sep:
        model, slash, op = rest.partition("/")
        if slash and op in _BEDROCK_OPS and model:
            return PathCall(True, _decoded(model), _BEDROCK_OPS[op])
    head, sep, rest = path.rpartition("/models/")
    if sep and "/" not in rest:
        model, colon, method = rest.partition(":")
        if colon and method:
            model = _decoded(model)
            if method in _COUNTING_METHODS or model in _COUNTING_MODELS:
                return PathCall(False, None, False)
            return PathCall(True, model or None, method.startswith("stream"))
    head, sep, rest = path.partition("/openai/deployments/")
    if sep:
        deployment = rest.partition("/")[0]
        if deployment:
            return PathCall(True, _decoded(deployment), False)
    return PathCall(True, None, False)
