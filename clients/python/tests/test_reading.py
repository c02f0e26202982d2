"""Reading requests and answers without a daemon: the token estimate, usage in every provider's
shape, errors from exceptions and bodies, and streamed answers cut at any byte."""

from __future__ import annotations

import gzip
import json
from typing import List

import httpx
import openai
import pytest

import llmctl
from llmctl._common import Outcome, limit_headers, local_advice, report_request
from llmctl._estimate import IMAGE_TOKENS, Estimate, estimate_body
from llmctl._outcome import error_info, from_exception, from_object
from llmctl._sse import StreamWatcher


def test_the_estimate_counts_text_messages_and_images() -> None:
    body = {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "s" * 40},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "t" * 401},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 100000}},
                ],
            },
        ],
        "max_completion_tokens": 300,
        "n": 2,
    }
    e = estimate_body(json.dumps(body).encode())
    # ceil(441 / 4) + 3 per message + one image; the image's base64 is not text.
    assert e.input_tokens == 111 + 6 + IMAGE_TOKENS
    assert (e.output_tokens, e.model, e.stream) == (600, "gpt-test", False)


def test_the_estimate_reads_anthropic_and_responses_shapes() -> None:
    anth = {
        "model": "claude",
        "system": [{"type": "text", "text": "x" * 80, "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "y" * 20},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"q": "zz"}}],
            },
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "base64", "data": "A" * 5000}}],
            },
        ],
        "max_tokens": 1024,
        "stream": True,
    }
    e = estimate_body(anth, image_tokens=500)
    assert e.input_tokens == -(-(80 + 20 + 1 + 2) // 4) + 9 + 500
    assert (e.output_tokens, e.stream) == (1024, True)
    responses = {"model": "o", "instructions": "i" * 8, "input": "p" * 8, "max_output_tokens": 7}
    assert estimate_body(responses) == Estimate("o", 4, 7, False)
    undeclared = estimate_body({"model": "m", "messages": []}, default_output_tokens=99)
    assert (undeclared.output_tokens, undeclared.output_declared) == (99, False)
    assert estimate_body(anth).output_declared is True
    assert estimate_body(b"not json").input_tokens == 1


@pytest.mark.parametrize(
    "usage, expected",
    [
        (
            {"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 60}},
            (100, 60, 7),
        ),
        (
            {
                "input_tokens": 40,
                "output_tokens": 9,
                "cache_read_input_tokens": 50,
                "cache_creation_input_tokens": 10,
            },
            (100, 50, 9),
        ),
        (
            {"input_tokens": 100, "output_tokens": 9, "input_tokens_details": {"cached_tokens": 30}},
            (100, 30, 9),
        ),
        ({"promptTokenCount": 12, "candidatesTokenCount": 3, "cachedContentTokenCount": 2}, (12, 2, 3)),
        (
            {
                "input_tokens": 5,
                "output_tokens": 1,
                "cache_read_input_tokens": None,
                "cache_creation_input_tokens": None,
            },
            (5, 0, 1),
        ),
        ({"total": 3}, None),
    ],
)
def test_usage_in_every_shape_counts_all_input_cached_included(usage: dict, expected: object) -> None:
    assert llmctl.parse_usage(usage) == expected


def test_anthropic_usage_becomes_a_report_of_all_input() -> None:
    out = from_object(
        {
            "usage": {
                "input_tokens": 40,
                "output_tokens": 9,
                "cache_read_input_tokens": 50,
                "cache_creation_input_tokens": 10,
            }
        }
    )
    req = report_request("lease", out, (0, 0), 1)
    assert (req.input_tokens, req.cached_input_tokens, req.output_tokens, req.usage_known) == (
        100,
        50,
        9,
        True,
    )


def test_a_report_without_usage_carries_the_estimate_as_unknown() -> None:
    req = report_request("lease", Outcome(status=0, headers={}, error_type="timeout"), (120, 30), 2)
    assert (req.status_code, req.input_tokens, req.output_tokens, req.usage_known, req.attempt) == (
        0,
        120,
        30,
        False,
        2,
    )


def test_error_types_from_each_providers_body() -> None:
    assert error_info({"error": {"message": "m", "type": "requests", "code": "rate_limit_exceeded"}}) == (
        "rate_limit_exceeded",
        "m",
    )
    assert error_info({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}) == (
        "overloaded_error",
        "Overloaded",
    )
    assert error_info({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "q"}}) == (
        "RESOURCE_EXHAUSTED",
        "q",
    )
    assert (
        error_info(
            {"message": "x", "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}
        )[0]
        == "insufficient_quota"
    )
    assert error_info({"choices": []}) == ("", "")
    # Gemini's quota id and retry delay are beside its message, in details: kept, so the daemon
    # can tell a daily quota from a minute's.
    gemini = {
        "error": {
            "code": 429,
            "status": "RESOURCE_EXHAUSTED",
            "message": "You exceeded your current quota.",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "20s"},
            ],
        }
    }
    assert error_info(gemini) == (
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota. [quotaId=GenerateRequestsPerDayPerProjectPerModel-FreeTier; retryDelay=20s]",
    )


def test_exceptions_become_outcomes() -> None:
    req = httpx.Request("POST", "https://api.example/v1/messages")
    resp = httpx.Response(
        529,
        headers={
            "retry-after": "3",
            "x-should-retry": "true",
            "set-cookie": "secret",
            "anthropic-ratelimit-requests-remaining": "0",
        },
        json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        request=req,
    )
    out = from_exception(httpx.HTTPStatusError("overloaded", request=req, response=resp))
    assert (out.status, out.error_type) == (529, "overloaded_error")
    assert out.headers == {
        "retry-after": "3",
        "x-should-retry": "true",
        "anthropic-ratelimit-requests-remaining": "0",
    }
    assert from_exception(httpx.ReadTimeout("slow", request=req)).error_type == "timeout"
    assert from_exception(httpx.ConnectError("refused", request=req)).error_type == "connection"
    assert from_exception(openai.APITimeoutError(request=req)).error_type == "timeout"
    assert from_exception(openai.APIConnectionError(request=req)).error_type == "connection"
    assert from_exception(ValueError("bug")).error_type == "ValueError"
    assert (from_exception(ValueError("bug")).status, from_exception(ConnectionResetError()).error_type) == (
        0,
        "connection",
    )
    # openai raises an error chunk of a streamed 200 without a status.
    streamed = openai.APIError(
        "boom", req, body={"message": "boom", "type": "server_error", "code": "rate_limit_exceeded"}
    )
    out = from_exception(streamed)
    assert (out.status, out.error_type) == (200, "rate_limit_exceeded")


def test_only_rate_limit_and_retry_headers_are_sent() -> None:
    h = limit_headers(
        [
            ("X-RateLimit-Remaining-Tokens", "9"),
            ("Retry-After-Ms", "20"),
            ("Authorization", "k"),
            ("Content-Type", "json"),
        ]
    )
    assert h == {"x-ratelimit-remaining-tokens": "9", "retry-after-ms": "20"}


def test_local_advice_follows_the_same_classes() -> None:
    assert local_advice(Outcome(200, {})).action == "done"
    assert local_advice(Outcome(429, {"retry-after": "4"})).retry_after == 4.0
    assert local_advice(Outcome(429, {}, error_type="insufficient_quota")).action == "give_up"
    assert local_advice(Outcome(400, {})).action == "give_up"
    assert local_advice(Outcome(0, {}, error_type="timeout")).action == "retry"
    assert (
        local_advice(Outcome(200, {}, error_type="overloaded_error", stream_started=True)).action == "give_up"
    )


ANTHROPIC_STREAM = (
    'event: message_start\r\ndata: {"type":"message_start","message":{"id":"m","usage":'
    '{"input_tokens":10,"cache_read_input_tokens":20,"cache_creation_input_tokens":0,"output_tokens":1}}}\r\n\r\n'
    'event: ping\r\ndata: {"type": "ping"}\r\n\r\n'
    ": a comment\r\n\r\n"
    'event: content_block_delta\r\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"h\\u00e9"}}\r\n\r\n'
    'event: message_delta\r\ndata: {"type":"message_delta","delta":{},"usage":{"output_tokens":17}}\r\n\r\n'
    'event: message_stop\r\ndata: {"type":"message_stop"}\r\n\r\n'
).encode()

OPENAI_ERROR_STREAM = (
    'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
    'data: {"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}\n\n'
).encode()


def feed(watcher: StreamWatcher, raw: bytes, size: int) -> None:
    for i in range(0, len(raw), size):
        watcher.feed(raw[i : i + size])


@pytest.mark.parametrize("size", [1, 2, 7, 1 << 16])
def test_a_stream_cut_anywhere_yields_its_usage(size: int) -> None:
    w = StreamWatcher(200, httpx.Headers({"content-type": "text/event-stream"}))
    feed(w, ANTHROPIC_STREAM, size)
    out = w.outcome()
    assert (out.status, out.input_tokens, out.cached_input_tokens, out.output_tokens) == (200, 30, 20, 17)
    assert out.usage_known and not out.error_type


def test_a_gzipped_stream_is_read_too() -> None:
    w = StreamWatcher(200, httpx.Headers({"content-encoding": "gzip"}))
    feed(w, gzip.compress(ANTHROPIC_STREAM), 5)
    assert w.outcome().output_tokens == 17


@pytest.mark.parametrize(
    "raw, etype, started",
    [
        (OPENAI_ERROR_STREAM, "rate_limit_exceeded", False),
        (
            b'data: {"choices":[{"delta":{"content":"tok"}}]}\n\n' + OPENAI_ERROR_STREAM,
            "rate_limit_exceeded",
            True,
        ),
        (
            b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"a"}}\n\n'
            b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
            "overloaded_error",
            True,
        ),
        (
            b'event: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":"m"}\n\n',
            "rate_limit_exceeded",
            False,
        ),
        (
            b'event: response.failed\ndata: {"type":"response.failed","response":{"error":{"code":"server_error","message":"x"}}}\n\n',
            "server_error",
            False,
        ),
    ],
)
def test_an_error_event_inside_a_200_is_reported_with_its_type(raw: bytes, etype: str, started: bool) -> None:
    w = StreamWatcher(200, {})
    feed(w, raw, 3)
    out = w.outcome()
    assert (out.status, out.error_type, out.stream_started) == (200, etype, started)


def test_a_stream_that_breaks_is_reported_as_such() -> None:
    w = StreamWatcher(200, {})
    w.feed(b'data: {"choices":[{"delta":{"content":"x"}}]}\n\n')
    out = w.outcome(httpx.RemoteProtocolError("peer closed"))
    assert (out.status, out.error_type, out.stream_started, out.usage_known) == (
        200,
        "connection",
        True,
        None,
    )


def test_report_response_refuses_what_it_cannot_read() -> None:
    with pytest.raises(TypeError, match="report_response"):
        from_object(42)


def events_of(raw: bytes) -> List[str]:
    from llmctl._sse import EventParser

    p = EventParser()
    for b in raw:
        p.feed(bytes([b]))
    p.finish()
    return [d for _, d in p.events]


def test_event_lines_end_with_cr_lf_or_crlf() -> None:
    assert events_of(b"data: a\r\rdata: b\n\ndata: c\r\n\r\ndata: d") == ["a", "b", "c", "d"]
    assert events_of(b"data: x\ndata: y\n\n") == ["x\ny"]


def test_a_transport_refuses_the_wrong_kind_of_client() -> None:
    from llmctl.httpx import AsyncLimitedTransport, LimitedTransport

    with pytest.raises(TypeError, match="AsyncClient"):
        AsyncLimitedTransport(key="k", client=llmctl.Client("/nonexistent.sock"))
    with pytest.raises(TypeError, match="llmctl.Client"):
        LimitedTransport(key="k", client=llmctl.AsyncClient("/nonexistent.sock"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="key must be"):
        LimitedTransport(key=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_retries"):
        LimitedTransport(key="k", max_retries=-1)


def test_refusal_codes_new_and_unknown() -> None:
    from llmctl._common import refusal_code
    from llmctl.v1 import limiter_pb2 as pb

    assert refusal_code(pb.REFUSAL_REASON_DAILY_QUOTA) == "daily_quota"
    assert refusal_code(pb.REFUSAL_REASON_UNSPECIFIED) == ""
    # A reason newer than this client: shown as its number, never mapped to another.
    assert refusal_code(99) == "99"
