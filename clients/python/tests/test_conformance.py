"""The rules stated once in conformance/*.json, run against the Python client: fail-open advice,
the headers a report carries, request estimates and error bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from llmctl._common import FAIL_OPEN_ATTEMPTS, Outcome, limit_headers, local_advice
from llmctl._estimate import DEFAULT_OUTPUT_TOKENS, estimate_body
from llmctl._outcome import error_info

ROOT = Path(__file__).resolve().parents[3] / "conformance"


def table(name: str) -> Dict[str, Any]:
    doc: Dict[str, Any] = json.loads((ROOT / name).read_text())
    return doc


def cases(name: str) -> List[Any]:
    return [pytest.param(c, id=c["name"]) for c in table(name)["cases"]]


def test_the_tables_constants_are_the_clients() -> None:
    assert table("advice.json")["max_attempts"] == FAIL_OPEN_ATTEMPTS
    assert table("estimates.json")["default_output_tokens"] == DEFAULT_OUTPUT_TOKENS


@pytest.mark.parametrize("case", cases("advice.json"))
def test_fail_open_advice(case: Dict[str, Any]) -> None:
    outcome = Outcome(
        status=case["status"],
        headers=case.get("headers", {}),
        error_type=case["error_type"],
        stream_started=case.get("stream_started", False),
    )
    advice = local_advice(outcome, case.get("attempt", 1))
    assert advice.action == case["fail_open"], advice
    if "min_delay_ms" in case:
        assert advice.retry_after * 1000 >= case["min_delay_ms"], advice
    if "max_delay_ms" in case:
        assert advice.retry_after * 1000 <= case["max_delay_ms"], advice


@pytest.mark.parametrize("case", cases("headers.json"))
def test_headers_a_report_carries(case: Dict[str, Any]) -> None:
    kept = limit_headers({case["name"]: "1"})
    assert bool(kept) == case["kept"], kept


@pytest.mark.parametrize("case", cases("estimates.json"))
def test_estimates(case: Dict[str, Any]) -> None:
    e = estimate_body(case["body"])
    assert (e.input_tokens, e.output_tokens, e.output_declared, e.stream) == (
        case["input_tokens"],
        case["output_tokens"],
        case["output_declared"],
        case["stream"],
    )


@pytest.mark.parametrize("case", cases("error_bodies.json"))
def test_error_bodies(case: Dict[str, Any]) -> None:
    assert error_info(case["body"]) == (case["type"], case["message"])


def sse(events: List[Any]) -> bytes:
    text = "".join((f"event: {e}\r\n" if e else "") + f"data: {json.dumps(d)}\r\n\r\n" for e, d in events)
    return text.encode()


@pytest.mark.parametrize("case", cases("usage.json"))
def test_usage_and_outcome(case: Dict[str, Any]) -> None:
    from llmctl._outcome import from_http
    from llmctl._sse import StreamWatcher

    if "body" in case:
        out = from_http(200, {}, json.dumps(case["body"]).encode())
        got = [out.input_tokens, out.cached_input_tokens, out.output_tokens] if out.usage_known else None
        assert got == case["usage"], out
        return
    data = sse(case["events"])
    for chunk in (1, 7, len(data)):
        w = StreamWatcher(200, {})
        for i in range(0, len(data), chunk):
            w.feed(data[i : i + chunk])
        out = w.outcome()
        got = [out.input_tokens, out.cached_input_tokens, out.output_tokens] if out.usage_known else None
        assert (got, out.error_type, out.error_message, w.output_seen) == (
            case["usage"],
            case["error_type"],
            case["error_message"],
            case["output"],
        ), f"chunks of {chunk}"
