"""Retry profiles, route groups and run budgets through the Python client, against the real
daemon and fake providers: what the client sends (profile, route_group, attempt, first_attempt)
reaches the daemon, and what the daemon answers reaches the caller."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from typing import Any, Callable, Dict, List, Tuple

import httpx2
import openai
import pytest

import llmctl
from conftest import Daemon, Provider
from llmctl.httpx import AsyncLimitedTransport, LimitedTransport, reroute

MESSAGES = [{"role": "user", "content": "hi"}]

POLICY = """
[daemon]
breaker_min_requests = 4
breaker_failure_rate = 0.5
breaker_open_for = "30s"
[profiles.interactive]
attempts = 3
deadline = "8s"
base = "10ms"
cap = "50ms"
[profiles.patient]
attempts = 6
deadline = "60s"
base = "10ms"
cap = "50ms"
[route_groups."chat"]
members = [{ key = "primary" }, { key = "spare", when = ["rate_limited", "unavailable"] }]
"""


class Advices:
    def __init__(self) -> None:
        self.items: List[Tuple[str, llmctl.Advice]] = []

    def __call__(self, request: Any, advice: llmctl.Advice) -> None:
        self.items.append((str(request.url), advice))

    @property
    def actions(self) -> List[str]:
        return [a.action if a.action != "fallback" else f"fallback:{a.fallback_key}" for _, a in self.items]


@pytest.fixture
def policy(start_daemon: Callable[..., Daemon]) -> Any:
    d = start_daemon(POLICY)
    c = llmctl.Client(d.socket, fail_mode="closed")
    yield d, c
    c.close()


def test_a_route_group_grants_its_first_member_that_can_serve(policy: Any) -> None:
    d, c = policy
    lease = c.acquire(route_group="chat", max_wait=0)
    assert lease.key == "primary"
    lease.report(200)
    c.cooldown("primary", 30, reason="test")
    with c.acquire(route_group="chat", max_wait=0) as lease:
        assert lease.key == "spare", "a member in cooldown is skipped"
        assert lease.report(200).action == "done"
    assert d.key("spare").granted_total == 1
    k = c.key_status("primary")
    assert k is not None and k.breaker == "closed" and k.breaker_open_remaining_ms == 0
    c.cooldown("spare", 30)
    with pytest.raises(llmctl.NotGranted) as e:
        c.acquire(route_group="chat", max_wait=0)
    assert not isinstance(e.value, llmctl.RunBudgetExceeded)
    assert 'no key of route group "chat" can serve' in e.value.reason
    assert e.value.reason_code == "route_group"
    assert "primary (cooling down)" in e.value.reason and e.value.not_before is not None


def test_the_async_client_acquires_through_a_route_group(policy: Any) -> None:
    d, c = policy
    c.cooldown("primary", 30)

    async def main() -> str:
        async with llmctl.AsyncClient(d.socket, fail_mode="closed") as ac:
            async with ac.acquire(route_group="chat", profile="interactive", max_wait=1) as lease:
                await lease.report(200)
                return lease.key

    assert asyncio.run(main()) == "spare"


def test_the_profile_named_on_acquire_bounds_the_attempts(policy: Any) -> None:
    _, c = policy
    advice = c.acquire("k", profile="interactive", attempt=3).report(503)
    assert advice.action == "give_up"
    assert "attempt 3 of 3 (interactive profile) failed on k" in advice.reason
    advice = c.acquire("k", profile="patient").report(503, attempt=3)
    assert advice.action == "retry" and advice.retry_after <= 0.05


def test_first_attempt_starts_the_profiles_deadline(policy: Any) -> None:
    _, c = policy
    # A key per lease: four failures on one key would open its breaker.
    # Attempt 1 began over 8 s ago: any backoff ends past the interactive deadline.
    lease = c.acquire("k1", profile="interactive")
    advice = lease.report(503, attempt=2, first_attempt=time.time() - 8.5)
    assert advice.action == "give_up" and "past the interactive profile's 8 s deadline" in advice.reason
    # Without it the deadline counts from this lease's grant.
    assert c.acquire("k2", profile="interactive").report(503, attempt=2).action == "retry"
    # Given to acquire, it goes with the lease's report, whatever way it is reported.
    started = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=9)
    lease = c.acquire("k3", profile="interactive", attempt=2, first_attempt=started)
    assert lease.first_attempt is not None and abs((lease.first_attempt - started).total_seconds()) < 0.002
    request = httpx2.Request("POST", "https://api.example/v1/chat/completions")
    advice = lease.report_response(httpx2.Response(503, request=request))
    assert advice.action == "give_up" and "deadline" in advice.reason
    recent = c.acquire("k4", profile="interactive", first_attempt=time.time() - 1)
    assert recent.report(503, attempt=2).action == "retry"


def test_a_run_past_its_budget_is_refused_with_run_budget_exceeded(policy: Any) -> None:
    d, c = policy
    assert c.set_run_budget("agent-7", max_calls=2) is True
    for _ in range(2):
        c.acquire("k", run_id="agent-7").report(200)
    with pytest.raises(llmctl.RunBudgetExceeded) as e:
        c.acquire("k", run_id="agent-7", max_wait=5)
    assert isinstance(e.value, llmctl.NotGranted)
    assert e.value.run_id == "agent-7" and e.value.key == "k"
    assert e.value.reason_code == "run_budget" and "max_calls is 2" in e.value.reason
    assert "run 'agent-7'" in str(e.value)
    run = c.run_status("agent-7")
    assert run is not None
    assert (run.calls, run.max_calls, run.max_retries, run.max_wall_time_ms) == (2, 2, 0, 0)
    assert run.exhausted.startswith("run_budget")
    assert c.run_status("nobody") is None
    # Other runs, and calls without a run, are not bounded by it.
    c.acquire("k", run_id="agent-8").report(200)
    c.acquire("k").report(200)
    # A bigger budget lets the run go on.
    c.set_run_budget("agent-7", max_calls=10)
    c.acquire("k", run_id="agent-7").report(200)
    assert c.run_status("agent-7").exhausted == ""


def test_a_run_is_bounded_by_wall_time_and_retries(policy: Any) -> None:
    _, c = policy
    c.set_run_budget("brief", max_wall_time=dt.timedelta(milliseconds=300))
    c.acquire("k", run_id="brief").report(200)
    assert c.run_status("brief").max_wall_time_ms == 300
    time.sleep(0.4)
    with pytest.raises(llmctl.RunBudgetExceeded, match="max_wall_time"):
        c.acquire("k", run_id="brief")

    c.set_run_budget("flaky", max_retries=1)
    assert c.acquire("k", run_id="flaky", profile="patient").report(503).action == "retry"
    advice = c.acquire("k", run_id="flaky", profile="patient", attempt=2).report(503)
    assert advice.action == "give_up" and advice.reason.startswith("run_budget"), advice
    assert c.run_status("flaky").retries == 1


def test_the_async_client_sets_and_meets_a_run_budget(policy: Any) -> None:
    d, _ = policy

    async def main() -> None:
        async with llmctl.AsyncClient(d.socket, fail_mode="closed") as ac:
            assert await ac.set_run_budget("async-run", max_calls=1)
            lease = await ac.acquire("k", run_id="async-run")
            await lease.report(200)
            with pytest.raises(llmctl.RunBudgetExceeded):
                await ac.acquire("k", run_id="async-run")
            run = await ac.run_status("async-run")
            assert run is not None and run.calls == 1

    asyncio.run(main())


def test_a_budget_from_the_config_applies_to_every_run(start_daemon: Callable[..., Daemon]) -> None:
    d = start_daemon("[run_budget]\nmax_calls = 1\n")
    with llmctl.Client(d.socket, fail_mode="closed") as c:
        c.acquire("k", run_id="any").report(200)
        with pytest.raises(llmctl.RunBudgetExceeded):
            c.acquire("k", run_id="any")


def test_set_run_budget_without_a_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    with llmctl.Client("/nonexistent/llmctl.sock", fail_mode="open") as c:
        assert c.set_run_budget("r", max_calls=3) is False
    with llmctl.Client("/nonexistent/llmctl.sock", fail_mode="closed") as c:
        with pytest.raises(llmctl.Unavailable):
            c.set_run_budget("r", max_calls=3)


def test_an_unknown_profile_is_the_daemons_invalid_argument(policy: Any) -> None:
    _, c = policy
    with pytest.raises(llmctl.InvalidArgument, match='profile "urgent" is not configured; use one of'):
        c.acquire("k", profile="urgent")
    with pytest.raises(llmctl.InvalidArgument, match="run_id 'r+' must be at most 256 bytes"):
        c.set_run_budget("r" * 300, max_calls=1)


# The transports: two fake providers stand for the members of the route group.


@pytest.fixture
def members(policy: Any, start_provider: Callable[..., Provider]) -> Any:
    d, c = policy
    failing = start_provider("--fault", "status=503")
    healthy = start_provider()
    return d, c, {"primary": failing, "spare": healthy}


def test_the_transport_follows_fallback_advice_through_its_route_hook(members: Any) -> None:
    d, c, providers = members
    advices = Advices()
    routed: List[str] = []

    def route(request: Any, key: str) -> Any:
        routed.append(key)
        return reroute(request, origin=providers[key].url, model=f"model-of-{key}")

    transport = LimitedTransport(
        route_group="chat", client=c, route=route, max_retries=5, profile="interactive", on_advice=advices
    )
    oa = openai.OpenAI(
        base_url=providers["primary"].url + "/v1",
        api_key="test",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )
    raw = oa.chat.completions.with_raw_response.create(model="m", messages=MESSAGES, max_tokens=5)
    completion = raw.parse()
    assert completion.model == "model-of-spare"
    assert advices.actions == ["retry", "retry", "fallback:spare", "done"]
    assert routed == ["primary", "primary", "primary", "spare"]
    assert raw.http_response.extensions["llmctl_key"] == "spare"
    assert raw.http_response.extensions["llmctl_advice"].action == "done"
    assert providers["primary"].stats()["responses"] == {"503": 3}
    assert providers["spare"].stats()["requests"] == 1
    primary, spare = d.key("primary"), d.key("spare")
    assert (primary.retries_total, primary.fallbacks_total, primary.in_flight) == (2, 1, 0)
    assert (spare.granted_total, spare.in_flight) == (1, 0)


def test_without_a_route_hook_fallback_advice_reaches_the_caller(members: Any) -> None:
    d, c, providers = members
    advices = Advices()
    transport = LimitedTransport(
        route_group="chat", client=c, max_retries=5, profile="interactive", on_advice=advices
    )
    oa = openai.OpenAI(
        base_url=providers["primary"].url + "/v1",
        api_key="test",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )
    with pytest.raises(openai.InternalServerError) as e:
        oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=5)
    advice = e.value.response.extensions["llmctl_advice"]
    assert (advice.action, advice.fallback_key) == ("fallback", "spare")
    assert e.value.response.extensions["llmctl_key"] == "primary"
    assert advices.actions == ["retry", "retry", "fallback:spare"]
    assert providers["spare"].stats()["requests"] == 0, "nothing is sent anywhere the caller did not say"
    # Acting on it: a client for the fallback key.
    spare = openai.OpenAI(
        base_url=providers["spare"].url + "/v1",
        api_key="test",
        http_client=httpx2.Client(transport=LimitedTransport(key=advice.fallback_key, client=c)),
        max_retries=0,
    )
    assert spare.chat.completions.create(model="m", messages=MESSAGES, max_tokens=5).choices
    assert d.key("spare").granted_total == 1


def test_the_async_transport_follows_fallback_advice(members: Any) -> None:
    d, _, providers = members

    async def main() -> Tuple[str, List[str]]:
        advices = Advices()
        async with llmctl.AsyncClient(d.socket, fail_mode="closed") as ac:
            transport = AsyncLimitedTransport(
                route_group="chat",
                client=ac,
                route=lambda request, key: reroute(request, origin=providers[key].url),
                max_retries=5,
                profile="interactive",
                on_advice=advices,
            )
            oa = openai.AsyncOpenAI(
                base_url=providers["primary"].url + "/v1",
                api_key="test",
                http_client=httpx2.AsyncClient(transport=transport),
                max_retries=0,
            )
            raw = await oa.chat.completions.with_raw_response.create(
                model="m", messages=MESSAGES, max_tokens=5
            )
            return raw.http_response.extensions["llmctl_key"], advices.actions

    key, actions = asyncio.run(main())
    assert key == "spare"
    assert actions == ["retry", "retry", "fallback:spare", "done"]


def test_the_transport_sends_the_run_id_and_surfaces_run_budget_exceeded(
    policy: Any, start_provider: Callable[..., Provider]
) -> None:
    d, c = policy
    provider = start_provider()
    c.set_run_budget("agent-1", max_calls=1)
    oa = openai.OpenAI(
        base_url=provider.url + "/v1",
        api_key="test",
        http_client=httpx2.Client(transport=LimitedTransport(key="openai/m", client=c, run_id="agent-1")),
        max_retries=0,
    )
    oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=5)
    with pytest.raises(Exception) as e:
        oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=5)
    chain: List[BaseException] = []
    exc: Any = e.value
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    assert any(isinstance(x, llmctl.RunBudgetExceeded) for x in chain), chain
    assert provider.stats()["requests"] == 1


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"key": "k", "route_group": "chat"}, "give key or route_group, not both"),
        (
            {"key": "k", "route": lambda r, k: r},
            "route must be a function (request, key) -> request, given with route_group",
        ),
        ({"route_group": "chat", "route": "no"}, "route must be a function"),
        ({}, "key must be a string or a function"),
    ],
)
def test_bad_transport_arguments_are_refused(kwargs: Dict[str, Any], words: str) -> None:
    for cls in (LimitedTransport, AsyncLimitedTransport):
        with pytest.raises(TypeError) as e:
            cls(**kwargs)
        assert words in str(e.value)
    with pytest.raises(llmctl.InvalidArgument, match="profile is empty"):
        LimitedTransport(key="k", profile="")


def test_reroute_copies_a_request_for_another_member() -> None:
    request = httpx2.Request(
        "POST",
        "https://api.a.example/v1/chat/completions?x=1",
        json={"model": "a", "messages": MESSAGES},
        headers={"authorization": "Bearer A", "x-extra": "1"},
        extensions={"timeout": {"read": 5.0}},
    )
    out = reroute(request, origin="http://127.0.0.1:9", model="b", headers={"authorization": "Bearer B"})
    assert str(out.url) == "http://127.0.0.1:9/v1/chat/completions?x=1"
    assert out.headers["host"] == "127.0.0.1:9" and out.headers["authorization"] == "Bearer B"
    assert out.headers["x-extra"] == "1" and int(out.headers["content-length"]) == len(out.content)
    assert b'"model":"b"' in out.content and out.extensions == {"timeout": {"read": 5.0}}
    assert reroute(request).content == request.content
    with pytest.raises(ValueError, match="scheme, host and port only"):
        reroute(request, origin="https://b.example/v2")
    with pytest.raises(ValueError, match="JSON object"):
        reroute(httpx2.Request("POST", "https://x.example", content=b"[1]"), model="b")


def test_a_route_hook_that_raises_sends_nothing_and_frees_the_lease(members: Any) -> None:
    d, c, providers = members

    def route(request: Any, key: str) -> Any:
        raise KeyError(key)

    transport = LimitedTransport(route_group="chat", client=c, route=route, max_retries=5)
    http = httpx2.Client(transport=transport)
    with pytest.raises(KeyError, match="primary"):
        http.post(
            providers["primary"].url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES}
        )
    assert providers["primary"].stats()["requests"] == 0
    k = d.key("primary")
    assert (k.granted_total, k.in_flight, k.tokens_outstanding) == (1, 0, 0)


def test_the_transport_sends_when_attempt_1_started_so_the_deadline_holds(
    start_daemon: Callable[..., Daemon], start_provider: Callable[..., Provider]
) -> None:
    d = start_daemon(
        '[profiles.quick]\nattempts = 50\ndeadline = "400ms"\nbackoff = "equal"\nbase = "100ms"\ncap = "100ms"\n'
    )
    provider = start_provider("--fault", "status=503", "--latency", "1ms")
    advices = Advices()
    with llmctl.Client(d.socket, fail_mode="closed") as c:
        transport = LimitedTransport(key="k", client=c, profile="quick", max_retries=40, on_advice=advices)
        http = httpx2.Client(transport=transport)
        r = http.post(provider.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES})
    assert r.status_code == 503
    # Each wait is 50 to 100 ms: at most 8 tries fit in 400 ms, never 41.
    assert 2 <= len(advices.actions) <= 9, advices.actions
    assert advices.actions[-1] == "give_up" and advices.actions[:-1] == ["retry"] * (len(advices.actions) - 1)
    assert "deadline" in advices.items[-1][1].reason
