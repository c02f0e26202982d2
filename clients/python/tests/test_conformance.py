"""The rules stated once in conformance/*.json, run against the Python client: fail-open advice,
the headers a report carries, request estimates and error bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from llmctl._bedrock import headers_usage, metrics_usage, stream_error_status, usage_of
from llmctl._common import FAIL_OPEN_ATTEMPTS, Outcome, advice_from, limit_headers, local_advice
from llmctl._estimate import DEFAULT_OUTPUT_TOKENS, estimate_body
from llmctl._outcome import error_info
from llmctl._paths import path_call
from llmctl._stream_usage import Unasked, ask, refuses
from llmctl.v1 import limiter_pb2 as pb

ROOT = Path(__file__).resolve().parents[3] / "conformance"


def table(name: str) -> Dict[str, Any]:
    doc: Dict[str, Any] = json.loads((ROOT / name).read_text())
    return doc


def cases(name: str) -> List[Any]:
    return [pytest.param(c, id=c["name"]) for c in table(name)["cases"]]


def test_the_tables_constants_are_the_clients() -> None:
    assert table("advice.json")["max_attempts"] == FAIL_OPEN_ATTEMPTS
    assert table("estimates.json")["default_output_tokens"] == DEFAULT_OUTPUT_TOKENS


@pytest.mark.parametrize("case", cases("daemon_advice.json"))
def test_the_daemons_advice(case: Dict[str, Any]) -> None:
    advice = advice_from(pb.ReportResponse(advice=case["advice"]))
    assert advice.action == case["action"]
    assert advice.should_retry == case["retries"]


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


@pytest.mark.parametrize("case", cases("paths.json"))
def test_what_a_path_says_about_the_call(case: Dict[str, Any]) -> None:
    call = path_call(case["path"])
    assert (call.limited, call.model, call.stream) == (case["limited"], case["model"], case["stream"])


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


def test_fail_static_phases() -> None:
    from llmctl._fail_static import FAIL_STATIC_FOR, RESTART_WAIT, WINDOW, phase

    t = table("fail_static.json")
    assert (t["restart_wait_ms"], t["fail_static_for_ms"], t["window_ms"]) == (
        RESTART_WAIT * 1000,
        FAIL_STATIC_FOR * 1000,
        WINDOW * 1000,
    )
    for c in t["phases"]:
        assert phase(c["outage_ms"] / 1000, c["answered"]) == c["phase"], c["name"]


@pytest.mark.parametrize("case", cases("fail_static.json"))
def test_fail_static_limits(case: Dict[str, Any]) -> None:
    from llmctl._fail_static import static_limits

    got = static_limits([g / 1000 for g in case["grants_ms"]], case["in_flight_max"])
    if case["rate_per_s"] is None:
        assert got is None
        return
    assert got is not None
    assert got[0] == pytest.approx(case["rate_per_s"]) and got[1:] == (case["burst"], case["concurrency"])


def test_fail_static_paces_a_key_at_what_it_was_getting() -> None:
    from llmctl._fail_static import FailStatic

    s = FailStatic()
    for i in range(20):  # 10 a second for 2 s before the outage at t=100
        s.granted("k", 98.0 + i * 0.1)
        s.released("k")
    assert s.take("other", 100.0, 105.0) is None, "a key it knows nothing of is not limited"
    assert s.take("k", 100.0, 105.0) == 0.0
    assert s.take("k", 100.0, 105.0) == 0.05, "one in flight at most, as it had"
    s.released("k")
    went = [s.take("k", 100.0, 105.0)]
    for _ in range(10):
        s.released("k")
        went.append(s.take("k", 100.0, 105.0))
    # A second of it as a burst: 10 at once, then one each 0.1 s.
    assert went[:9] == [0.0] * 9 and went[9] is not None and went[9] > 0, went
    assert s.take("k", 100.0, 105.2) == 0.0


def section(name: str, key: str) -> List[Any]:
    return [pytest.param(c, id=c["name"]) for c in table(name)[key]]


@pytest.mark.parametrize("case", section("stream_usage.json", "requests"))
def test_a_stream_is_asked_for_its_usage(case: Dict[str, Any]) -> None:
    assert ask(case["path"], case["body"]) == case["body_sent"]


@pytest.mark.parametrize("case", section("stream_usage.json", "refusals"))
def test_an_upstream_refusing_stream_options(case: Dict[str, Any]) -> None:
    assert refuses(case["status"], case["body"]) == case["refuses"]


@pytest.mark.parametrize("case", section("stream_usage.json", "streams"))
def test_the_caller_gets_the_stream_it_asked_for(case: Dict[str, Any]) -> None:
    data = case["in"].encode()
    for size in (max(len(data), 1), 1, 3, 17):
        f = Unasked()
        out = b"".join(f.feed(data[i : i + size]) for i in range(0, len(data), size)) + f.finish()
        assert out.decode() == case["out"], size


BEDROCK_USAGE = {"converse": usage_of, "metrics": metrics_usage, "headers": headers_usage}


@pytest.mark.parametrize("case", cases("bedrock_stream_errors.json"))
def test_an_exception_inside_a_bedrock_stream_is_reported_at_its_own_status(case: Dict[str, Any]) -> None:
    assert stream_error_status(case["exception"]) == case["status"]


@pytest.mark.parametrize("case", cases("bedrock_usage.json"))
def test_bedrocks_counts_in_the_daemons_terms(case: Dict[str, Any]) -> None:
    u = BEDROCK_USAGE[case["from"]](case["fields"])
    assert (list(u) if u is not None else None) == case["usage"]
