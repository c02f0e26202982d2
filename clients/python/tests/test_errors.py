"""Bad input raises an exception that says what was wrong, whether the client or the daemon
caught it."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

import llmctl
from conftest import Daemon


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"key": ""}, "key is empty"),
        ({"key": None}, "key must be a string"),
        ({"key": "openai//gpt"}, "empty segment"),
        ({"key": "bad\nkey"}, "control characters"),
        ({"key": "k" * 300}, "at most 256"),
        ({"key": "k", "input_tokens": -1}, "input_tokens = -1 is negative"),
        ({"key": "k", "output_tokens": -5}, "output_tokens = -5 is negative"),
        ({"key": "k", "input_tokens": 2_000_000_000}, "over the limit"),
        ({"key": "k", "input_tokens": 1.5}, "whole number"),
        ({"key": "k", "requests": 0}, "at least 1 request"),
        ({"key": "k", "max_wait": -1}, "max_wait = -1 is negative"),
        ({"key": "k", "max_wait": 7200}, "maximum of 3600"),
        ({"key": "k", "priority": "high"}, "priority"),
        ({"key": "k", "route_group": "chat"}, "give key or route_group, not both"),
        ({"key": None, "route_group": ""}, "route_group is empty"),
        ({"key": "k", "profile": ""}, "profile is empty"),
        ({"key": "k", "profile": 3}, "profile must be a string"),
        ({"key": "k", "run_id": "a\nb"}, "printable"),
        ({"key": "k", "first_attempt": "yesterday"}, "first_attempt must be a datetime or Unix seconds"),
        ({"key": "k", "first_attempt": -5}, "first_attempt = -5 is not a time"),
        ({"key": "k", "first_attempt": time.time() * 1000}, "is in the future"),
    ],
)
def test_bad_acquire_input_is_refused_before_the_daemon_is_asked(kwargs: Any, words: str) -> None:
    # No daemon on this socket and fail-open: the check must not depend on one.
    c = llmctl.Client("/nonexistent/llmctl.sock")
    try:
        key = kwargs.pop("key")
        with pytest.raises(llmctl.InvalidArgument) as e:
            c.acquire(key, **kwargs)
        assert isinstance(e.value, ValueError)
        assert words in str(e.value)
    finally:
        c.close()


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"status": 42}, "status = 42 is not an HTTP status"),
        ({"status": 200, "input_tokens": -3}, "input_tokens = -3 is negative"),
        (
            {"status": 200, "input_tokens": 10, "cached_input_tokens": 20},
            "cached_input_tokens = 20 is more than input_tokens = 10",
        ),
        ({"status": 200, "attempt": 0}, "the first attempt is 1"),
        ({"status": 200, "first_attempt": float("nan")}, "is not a time"),
        ({"status": 200, "first_attempt": True}, "first_attempt must be a datetime"),
    ],
)
def test_bad_report_input_is_refused_and_the_lease_stays_open(
    client: llmctl.Client, kwargs: Any, words: str
) -> None:
    lease = client.acquire("k")
    with pytest.raises(llmctl.InvalidArgument, match=words):
        lease.report(**kwargs)
    assert not lease.reported
    assert lease.report(200).action == "done"


def test_a_bad_fail_mode_or_client_id_is_refused() -> None:
    with pytest.raises(ValueError, match="fail_mode 'maybe'"):
        llmctl.Client("/x.sock", fail_mode="maybe")
    with pytest.raises(ValueError, match="client_id"):
        llmctl.Client("/x.sock", client_id="")
    with pytest.raises(ValueError, match="fail_mode"):
        llmctl.AsyncClient("/x.sock", fail_mode="")


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"run_id": ""}, "run_id is empty"),
        ({"run_id": 7}, "run_id must be a string"),
        ({"run_id": "r", "max_calls": 0}, "max_calls = 0 would refuse every call"),
        ({"run_id": "r", "max_retries": 0}, "max_retries = 0 cannot be set: the daemon reads 0 as no bound"),
        ({"run_id": "r", "max_calls": -1}, "max_calls = -1 is negative"),
        ({"run_id": "r", "max_calls": 2.5}, "max_calls must be a whole number"),
        ({"run_id": "r", "max_wall_time": 0}, "max_wall_time = 0; give a positive number of seconds"),
        ({"run_id": "r", "max_wall_time": "1h"}, "max_wall_time must be a number of seconds"),
    ],
)
def test_a_bad_run_budget_is_refused_before_the_daemon_is_asked(kwargs: Any, words: str) -> None:
    c = llmctl.Client("/nonexistent/llmctl.sock")
    try:
        run_id = kwargs.pop("run_id")
        with pytest.raises(llmctl.InvalidArgument, match=re.escape(words)):
            c.set_run_budget(run_id, **kwargs)
    finally:
        c.close()


def test_a_bad_cooldown_is_refused(client: llmctl.Client) -> None:
    with pytest.raises(llmctl.InvalidArgument, match="positive"):
        client.cooldown("k", 0)
    with pytest.raises(llmctl.InvalidArgument, match="key is empty"):
        client.cooldown("", 5)


def test_the_daemons_invalid_argument_is_a_value_error_with_its_message(client: llmctl.Client) -> None:
    with pytest.raises(llmctl.InvalidArgument) as e:
        client.acquire(route_group="nowhere")
    assert isinstance(e.value, ValueError)
    assert e.value.code == "INVALID_ARGUMENT"
    assert 'route group "nowhere" is not configured' in str(e.value)
    with pytest.raises(llmctl.InvalidArgument) as e:
        client.acquire("k", profile="urgent")
    assert 'profile "urgent" is not configured; use one of interactive, batch' in str(e.value)


def test_a_request_that_can_never_fit_is_refused_at_once(start_daemon: Any) -> None:
    d: Daemon = start_daemon('[keys."small"]\ntokens_per_minute = 1000\n')
    with llmctl.Client(d.socket, fail_mode="closed") as c:
        with pytest.raises(llmctl.NeverFits) as e:
            c.acquire("small", input_tokens=5000, output_tokens=10, max_wait=5)
    assert e.value.code == "FAILED_PRECONDITION"
    assert "small" in str(e.value) and "5010" in str(e.value)


def test_the_daemons_full_bounds_are_reported_as_busy(start_daemon: Any) -> None:
    d: Daemon = start_daemon("[daemon]\nmax_keys = 2\n")
    with llmctl.Client(d.socket, fail_mode="closed") as c:
        # Idle keys would make room for a new one; keys with a lease in flight cannot.
        held = [c.acquire("a"), c.acquire("b")]
        with pytest.raises(llmctl.DaemonBusy) as e:
            c.acquire("c")
        for lease in held:
            lease.report(200)
        c.acquire("c").report(200)
    assert e.value.code == "RESOURCE_EXHAUSTED" and "max_keys" in str(e.value)
