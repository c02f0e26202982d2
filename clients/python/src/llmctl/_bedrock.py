"""Bedrock's usage counts (Converse's ``usage``, a stream's ``metadata``, InvokeModel's
invocation metrics and token-count headers) in the daemon's terms, for ``llmctl.aws`` and for the
transports' reading of Bedrock's streams."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Tuple

# InvokeModel's usage headers: input, output, cache read and cache written.
TOKEN_HEADERS = (
    "x-amzn-bedrock-input-token-count",
    "x-amzn-bedrock-output-token-count",
    "x-amzn-bedrock-cache-read-input-token-count",
    "x-amzn-bedrock-cache-write-input-token-count",
)


def _int(v: Any) -> Optional[int]:
    if isinstance(v, bool):
        return None
    if isinstance(v, int) and v >= 0:
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


def counted(fields: Mapping[str, Any], names: Tuple[str, str, str, str]) -> Optional[Tuple[int, int, int]]:
    """(input, cached input, output) from Bedrock's counts: input, output, cache read and cache
    written, under `names`. Bedrock's input leaves out what the cache read and wrote; the
    daemon's input counts all of it, the read part as cached."""
    inp, out = _int(fields.get(names[0])), _int(fields.get(names[1]))
    if inp is None or out is None:
        return None
    read = _int(fields.get(names[2])) or 0
    written = _int(fields.get(names[3])) or 0
    return inp + read + written, read, out


def usage_of(parsed: Mapping[str, Any]) -> Optional[Tuple[int, int, int]]:
    """Usage from Converse's ``usage`` (or a stream's ``metadata``)."""
    usage = parsed.get("usage")
    if not isinstance(usage, Mapping):
        return None
    return counted(usage, ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens"))


def metrics_usage(chunk: Mapping[str, Any]) -> Optional[Tuple[int, int, int]]:
    """Usage from the ``amazon-bedrock-invocationMetrics`` of InvokeModel's last stream chunk."""
    m = chunk.get("amazon-bedrock-invocationMetrics")
    if not isinstance(m, Mapping):
        return None
    return counted(
        m, ("inputTokenCount", "outputTokenCount", "cacheReadInputTokenCount", "cacheWriteInputTokenCount")
    )


def headers_usage(headers: Mapping[str, Any]) -> Optional[Tuple[int, int, int]]:
    """Usage from InvokeModel's token-count headers (names in any case)."""
    return counted({str(k).lower(): v for k, v in headers.items()}, TOKEN_HEADERS)


# An exception inside a Bedrock event stream, by its name with a lower-case first letter: the
# status Bedrock gives the same exception as an answer (conformance/bedrock_stream_errors.json).
STREAM_ERROR_STATUS = {
    "throttlingException": 429,
    "serviceUnavailableException": 503,
    "internalServerException": 500,
    "modelStreamErrorException": 424,
    "modelTimeoutException": 408,
    "validationException": 400,
    "serviceQuotaExceededException": 400,
}


def stream_error_status(name: str) -> Optional[int]:
    """The status a stream's exception stands for (None: one not known, the stream's own)."""
    return STREAM_ERROR_STATUS.get(name[:1].lower() + name[1:])
