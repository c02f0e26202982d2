"""The real openai and anthropic SDKs through llmctl's httpx transports, against the real daemon
and the fake provider: usage reported (plain and streamed, sync and async), cooldowns shared
with other processes, and advice that never retries what cannot succeed."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Callable, List, Tuple

import anthropic
import httpx
import httpx2
import openai
import pytest
import requests

import llmctl
from conftest import Daemon, Provider, run_python, settled
from llmctl.httpx import AsyncLimitedTransport, LimitedTransport

MESSAGES = [{"role": "user", "content": "Say something short about rate limits. " * 5}]


class Advices:
    """Collects every advice the transport got back from the daemon."""

    def __init__(self) -> None:
        self.items: List[Tuple[str, llmctl.Advice]] = []

    def __call__(self, request: Any, advice: llmctl.Advice) -> None:
        self.items.append((str(request.url), advice))

    @property
    def actions(self) -> List[str]:
        return [a.action for _, a in self.items]

    @property
    def last(self) -> llmctl.Advice:
        return self.items[-1][1]


def openai_sync(provider: Provider, transport: Any, http: Any = httpx2) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=provider.url + "/v1",
        api_key="test",
        http_client=http.Client(transport=transport),
        max_retries=0,
    )


def anthropic_sync(provider: Provider, transport: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=provider.url, api_key="test", http_client=httpx2.Client(transport=transport), max_retries=0
    )


def test_openai_plain_call_reports_its_usage(setup: Any) -> None:
    daemon, provider, client = setup
    advices = Advices()
    oa = openai_sync(provider, LimitedTransport(key="openai/gpt-test", client=client, on_advice=advices))
    r = oa.chat.completions.create(model="gpt-test", messages=MESSAGES, max_tokens=64)
    assert r.usage is not None and r.usage.prompt_tokens_details.cached_tokens > 0
    assert advices.actions == ["done"]
    settled(daemon, "openai/gpt-test", r.usage.prompt_tokens + r.usage.completion_tokens)
    k = daemon.key("openai/gpt-test")
    assert k.last_headers.get("x-ratelimit-limit-requests") == "100000"


def test_openai_streamed_call_reports_the_usage_of_its_last_chunk(setup: Any) -> None:
    daemon, provider, client = setup
    advices = Advices()
    oa = openai_sync(provider, LimitedTransport(key="openai/gpt-test", client=client, on_advice=advices))
    stream = oa.chat.completions.create(
        model="gpt-test",
        messages=MESSAGES,
        max_tokens=64,
        stream=True,
        stream_options={"include_usage": True},
    )
    usage = None
    text = ""
    for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            assert advices.actions == [], "reported before the stream ended"
        if chunk.usage:
            usage = chunk.usage
    assert usage is not None and text
    assert advices.actions == ["done"]
    settled(daemon, "openai/gpt-test", usage.prompt_tokens + usage.completion_tokens)


def test_an_abandoned_stream_is_reported_when_closed(setup: Any) -> None:
    daemon, provider, client = setup
    advices = Advices()
    oa = openai_sync(provider, LimitedTransport(key="openai/x", client=client, on_advice=advices))
    with oa.chat.completions.create(model="x", messages=MESSAGES, max_tokens=64, stream=True) as stream:
        next(iter(stream))
    assert advices.actions == ["done"]
    assert daemon.key("openai/x").in_flight == 0


class Answered:
    """Records when each report says its answer came (`Outcome.answered_unix_ms`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.stamps: List[int] = []
        for cls in (llmctl.Lease, llmctl.AsyncLease):
            original = cls.report_outcome

            def wrapped(lease: Any, outcome: Any, _original: Any = original) -> Any:
                self.stamps.append(outcome.answered_unix_ms)
                return _original(lease, outcome)

            monkeypatch.setattr(cls, "report_outcome", wrapped)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def test_a_report_says_when_its_answer_came_not_when_it_was_read(
    setup: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A window the provider keeps frees a request's place a second after its answer: a caller
    # that reads its stream slowly (or a busy machine) must not make that later.
    daemon, provider, client = setup
    answered = Answered(monkeypatch)
    oa = openai_sync(provider, LimitedTransport(key="openai/answered", client=client))
    start = now_ms()
    oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=16)
    assert len(answered.stamps) == 1 and start <= answered.stamps[0] <= now_ms(), answered.stamps
    stream = oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=16, stream=True)
    returned = now_ms()
    time.sleep(0.3)
    for _ in stream:
        pass
    assert len(answered.stamps) == 2
    assert start <= answered.stamps[1] <= returned, (answered.stamps, returned)

    async def streamed() -> int:
        async with llmctl.AsyncClient(daemon.socket, fail_mode="closed") as c:
            transport = AsyncLimitedTransport(key="openai/answered", client=c)
            aoa = openai.AsyncOpenAI(
                base_url=provider.url + "/v1",
                api_key="test",
                http_client=httpx2.AsyncClient(transport=transport),
                max_retries=0,
            )
            s = await aoa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=16, stream=True)
            at = now_ms()
            await asyncio.sleep(0.3)
            async for _ in s:
                pass
            await aoa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=16)
            return at

    returned = asyncio.run(streamed())
    assert len(answered.stamps) == 4
    assert start <= answered.stamps[2] <= returned, (answered.stamps, returned)
    assert returned <= answered.stamps[3] <= now_ms(), (answered.stamps, returned)


def test_anthropic_plain_call_reports_all_input_cached_included(setup: Any) -> None:
    daemon, provider, client = setup
    advices = Advices()
    an = anthropic_sync(provider, LimitedTransport(key="anthropic/claude", client=client, on_advice=advices))
    m = an.messages.create(model="claude-test", max_tokens=64, messages=MESSAGES, system="Be brief.")
    u = m.usage
    assert u.cache_read_input_tokens and u.cache_read_input_tokens > 0
    total_input = u.input_tokens + (u.cache_read_input_tokens or 0) + (u.cache_creation_input_tokens or 0)
    assert advices.actions == ["done"]
    settled(daemon, "anthropic/claude", total_input + u.output_tokens)


def test_anthropic_streamed_call_reports_its_usage(setup: Any) -> None:
    daemon, provider, client = setup
    advices = Advices()
    an = anthropic_sync(provider, LimitedTransport(key="anthropic/claude", client=client, on_advice=advices))
    with an.messages.stream(model="claude-test", max_tokens=64, messages=MESSAGES) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text
    u = final.usage
    assert advices.actions == ["done"]
    settled(daemon, "anthropic/claude", u.input_tokens + (u.cache_read_input_tokens or 0) + u.output_tokens)


def test_async_sdks_report_plain_and_streamed_usage(setup: Any) -> None:
    daemon, provider, _ = setup
    advices = Advices()

    async def main() -> int:
        async with llmctl.AsyncClient(daemon.socket, fail_mode="closed") as c:
            oa = openai.AsyncOpenAI(
                base_url=provider.url + "/v1",
                api_key="test",
                http_client=httpx2.AsyncClient(
                    transport=AsyncLimitedTransport(key="openai/async", client=c, on_advice=advices)
                ),
                max_retries=0,
            )
            an = anthropic.AsyncAnthropic(
                base_url=provider.url,
                api_key="test",
                http_client=httpx2.AsyncClient(
                    transport=AsyncLimitedTransport(key="anthropic/async", client=c, on_advice=advices)
                ),
                max_retries=0,
            )
            r = await oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=32)
            expected_openai = r.usage.total_tokens
            s = await oa.chat.completions.create(
                model="m",
                messages=MESSAGES,
                max_tokens=32,
                stream=True,
                stream_options={"include_usage": True},
            )
            async for chunk in s:
                if chunk.usage:
                    expected_openai += chunk.usage.total_tokens
            m = await an.messages.create(model="c", max_tokens=32, messages=MESSAGES)
            expected_anthropic = (
                m.usage.input_tokens + m.usage.cache_read_input_tokens + m.usage.output_tokens
            )
            async with an.messages.stream(model="c", max_tokens=32, messages=MESSAGES) as stream:
                async for _ in stream:
                    pass
                u = (await stream.get_final_message()).usage
            expected_anthropic += u.input_tokens + u.cache_read_input_tokens + u.output_tokens
            settled(daemon, "openai/async", expected_openai)
            settled(daemon, "anthropic/async", expected_anthropic)
            return expected_openai

    assert asyncio.run(main()) > 0
    assert advices.actions == ["done"] * 4


def test_the_key_can_depend_on_the_model(setup: Any) -> None:
    daemon, provider, client = setup
    oa = openai_sync(provider, LimitedTransport(key=lambda model: f"openai/{model}", client=client))
    oa.chat.completions.create(model="small", messages=MESSAGES, max_tokens=8)
    oa.chat.completions.create(model="large", messages=MESSAGES, max_tokens=8)
    an = anthropic_sync(provider, LimitedTransport(key="anthropic/{model}", client=client))
    an.messages.create(model="haiku", max_tokens=8, messages=MESSAGES)
    keys = daemon.status()
    assert all(keys[k].granted_total == 1 for k in ("openai/small", "openai/large", "anthropic/haiku"))


def test_plain_httpx_clients_work_too(setup: Any) -> None:
    daemon, provider, client = setup
    oa = openai_sync(provider, LimitedTransport(key="openai/legacy", client=client), http=httpx)
    r = oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=8)
    total = r.usage.total_tokens
    with httpx.Client(transport=LimitedTransport(key="openai/legacy", client=client)) as h:
        body = {
            "model": "m",
            "messages": MESSAGES,
            "max_tokens": 8,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        with h.stream("POST", provider.url + "/v1/chat/completions", json=body) as resp:
            for line in resp.iter_lines():
                if line.startswith("data: {"):
                    u = json.loads(line[6:]).get("usage")
                    if u:
                        total += u["total_tokens"]
        # Requests that are not JSON POSTs pass straight through, unlimited.
        assert h.get(provider.url + "/stats").status_code == 200
    # One transport can serve clients of both libraries.
    shared = LimitedTransport(key="openai/legacy", client=client)
    for http in (httpx, httpx2):
        r = openai_sync(provider, shared, http=http).chat.completions.create(
            model="m", messages=MESSAGES, max_tokens=8
        )
        total += r.usage.total_tokens
    settled(daemon, "openai/legacy", total)
    assert daemon.key("openai/legacy").granted_total == 4


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_the_transport_that_sends_is_made_with_the_transport_not_by_the_first_request(
    setup: Any, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Making one reads the CA bundle into a TLS context: that is set-up, not a request's time.
    daemon, provider, client = setup
    made: List[str] = []
    name = "HTTPTransport" if kind == "sync" else "AsyncHTTPTransport"
    for lib in (httpx, httpx2):
        real = getattr(lib, name)

        def counted(*args: Any, _real: Any = real, _lib: str = lib.__name__, **kwargs: Any) -> Any:
            made.append(_lib)
            return _real(*args, **kwargs)

        monkeypatch.setattr(lib, name, counted)
    if kind == "sync":
        transport: Any = LimitedTransport(key="openai/ahead", client=client)
        assert made == ["httpx2"]
        openai_sync(provider, transport).chat.completions.create(model="m", messages=MESSAGES, max_tokens=8)
    else:

        async def call() -> None:
            async with llmctl.AsyncClient(daemon.socket) as aclient:
                transport = AsyncLimitedTransport(key="openai/ahead", client=aclient)
                assert made == ["httpx2"]
                sdk = openai.AsyncOpenAI(
                    base_url=provider.url + "/v1",
                    api_key="test",
                    http_client=httpx2.AsyncClient(transport=transport),
                    max_retries=0,
                )
                await sdk.chat.completions.create(model="m", messages=MESSAGES, max_tokens=8)
                await transport.aclose()

        asyncio.run(call())
    # The request went through the one made ahead: none was made for it.
    assert made == ["httpx2"]
    assert daemon.key("openai/ahead").granted_total == 1
    if kind == "sync":
        # The other library's is made by its first request.
        openai_sync(provider, transport, http=httpx).chat.completions.create(
            model="m", messages=MESSAGES, max_tokens=8
        )
        assert made == ["httpx2", "httpx"]
        assert daemon.key("openai/ahead").granted_total == 2


def test_the_default_client_uses_the_default_socket(setup: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    daemon, provider, _ = setup
    monkeypatch.setenv("LLMCTL_SOCKET", daemon.socket)
    with LimitedTransport(key="openai/default") as transport:
        oa = openai_sync(provider, transport)
        oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=8)
        assert transport.client.socket == daemon.socket
    assert daemon.key("openai/default").granted_total == 1


COOLDOWN_SEEN = """
import llmctl
c = llmctl.Client(fail_mode="closed")
try:
    c.acquire(KEY, max_wait=0).report(200)
    print("granted")
except llmctl.NotGranted as e:
    print("not_granted", e.not_before.timestamp())
"""


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_429_with_retry_after_cools_the_key_down_for_every_process(setup: Any, sdk: str) -> None:
    daemon, provider, client = setup
    advices = Advices()
    transport = LimitedTransport(key=f"{sdk}/m", client=client, on_advice=advices, max_retries=0)
    provider.faults(["rate_limit,retry_after=5,count=1"])
    if sdk == "openai":
        with pytest.raises(openai.RateLimitError):
            openai_sync(provider, transport).chat.completions.create(
                model="m", messages=MESSAGES, max_tokens=8
            )
    else:
        with pytest.raises(anthropic.RateLimitError):
            anthropic_sync(provider, transport).messages.create(model="m", max_tokens=8, messages=MESSAGES)
    rejected_at = time.time()
    assert advices.last.action == "retry" and 4.5 <= advices.last.retry_after <= 5.5
    out = run_python(COOLDOWN_SEEN.replace("KEY", repr(f"{sdk}/m")), env={"LLMCTL_SOCKET": daemon.socket})
    assert out.returncode == 0, out.stderr
    word, _, not_before = out.stdout.strip().partition(" ")
    assert word == "not_granted", out.stdout
    assert rejected_at + 4 <= float(not_before) <= rejected_at + 5.5
    k = daemon.key(f"{sdk}/m")
    assert k.rate_limited_total == 1 and k.cooldown_remaining_ms > 3500


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_400_is_never_retried(setup: Any, sdk: str) -> None:
    daemon, provider, client = setup
    advices = Advices()
    # The transport is allowed to follow the advice here, and must still not retry.
    transport = LimitedTransport(key=f"{sdk}/m", client=client, on_advice=advices, max_retries=3)
    provider.faults(["status=400,count=1"])
    if sdk == "openai":
        with pytest.raises(openai.BadRequestError):
            openai_sync(provider, transport).chat.completions.create(
                model="m", messages=MESSAGES, max_tokens=8
            )
    else:
        with pytest.raises(anthropic.BadRequestError):
            anthropic_sync(provider, transport).messages.create(model="m", max_tokens=8, messages=MESSAGES)
    assert advices.actions == ["give_up"]
    assert "400" in advices.last.reason
    assert provider.stats()["requests"] == 1


def test_insufficient_quota_gets_give_up_and_no_retry(setup: Any) -> None:
    daemon, provider, client = setup
    advices = Advices()
    transport = LimitedTransport(key="openai/m", client=client, on_advice=advices, max_retries=3)
    provider.faults(["insufficient_quota,count=1"])
    with pytest.raises(openai.RateLimitError) as e:
        openai_sync(provider, transport).chat.completions.create(model="m", messages=MESSAGES, max_tokens=8)
    assert e.value.code == "insufficient_quota"
    assert advices.actions == ["give_up"] and "quota" in advices.last.reason
    assert provider.stats()["requests"] == 1
    assert daemon.key("openai/m").cooldown_remaining_ms == 0, "a spent quota is no rate limit"


def test_anthropic_billing_error_gets_give_up(setup: Any) -> None:
    _, provider, client = setup
    advices = Advices()
    provider.faults(["insufficient_quota,count=1"])
    with pytest.raises(anthropic.BadRequestError):
        anthropic_sync(
            provider, LimitedTransport(key="anthropic/m", client=client, on_advice=advices)
        ).messages.create(model="m", max_tokens=8, messages=MESSAGES)
    assert advices.actions == ["give_up"]


def test_the_transport_follows_retry_advice_unless_told_not_to(setup: Any) -> None:
    daemon, provider, client = setup
    advices = Advices()
    provider.faults(["status=503,count=1"])
    with pytest.raises(openai.InternalServerError):
        openai_sync(
            provider, LimitedTransport(key="openai/m", client=client, on_advice=advices, max_retries=0)
        ).chat.completions.create(model="m", messages=MESSAGES, max_tokens=8)
    assert advices.actions == ["retry"] and provider.stats()["requests"] == 1

    provider.faults(["status=503,count=1"])
    oa = openai_sync(
        provider, LimitedTransport(key="openai/m", client=client, on_advice=advices, max_retries=2)
    )
    r = oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=8)
    assert r.choices[0].message.content
    assert advices.actions == ["retry", "retry", "done"]
    assert provider.stats()["responses"] == {"503": 2, "200": 1}
    assert daemon.key("openai/m").granted_total == 3


@pytest.mark.parametrize("after_tokens, action", [(3, "give_up"), (0, "retry")])
def test_anthropic_error_inside_a_200_stream_is_reported_with_its_type(
    setup: Any, after_tokens: int, action: str
) -> None:
    daemon, provider, client = setup
    advices = Advices()
    an = anthropic_sync(provider, LimitedTransport(key="anthropic/m", client=client, on_advice=advices))
    provider.faults([f"stream_error=overloaded_error,after_tokens={after_tokens},count=1"])
    with pytest.raises(anthropic.APIStatusError) as e:
        with an.messages.stream(model="m", max_tokens=32, messages=MESSAGES) as stream:
            for _ in stream:
                pass
    assert e.value.status_code == 200
    assert advices.actions == [action], advices.items
    k = daemon.key("anthropic/m")
    if after_tokens:
        assert "overloaded_error" in advices.last.reason and "delivered" in advices.last.reason
    else:
        # Nothing reached the caller: an overload like a 529, which cools the key down.
        assert k.rate_limited_total == 1 and k.cooldown_remaining_ms > 0
    assert k.in_flight == 0


@pytest.mark.parametrize("after_tokens, action", [(2, "give_up"), (0, "retry")])
def test_openai_error_chunk_inside_a_200_stream_is_reported_with_its_type(
    setup: Any, after_tokens: int, action: str
) -> None:
    daemon, provider, client = setup
    advices = Advices()
    oa = openai_sync(provider, LimitedTransport(key="openai/m", client=client, on_advice=advices))
    provider.faults([f"stream_error=rate_limit_exceeded,after_tokens={after_tokens},count=1"])
    with pytest.raises(openai.APIError):
        for _ in oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=32, stream=True):
            pass
    assert advices.actions == [action], advices.items
    k = daemon.key("openai/m")
    if after_tokens:
        assert "rate_limit_exceeded" in advices.last.reason and "delivered" in advices.last.reason
    else:
        assert k.rate_limited_total == 1 and k.cooldown_remaining_ms > 0


def test_report_response_reads_sdk_results_raw_responses_and_errors(setup: Any) -> None:
    daemon, provider, client = setup
    oa = openai.OpenAI(base_url=provider.url + "/v1", api_key="test", max_retries=0)
    an = anthropic.Anthropic(base_url=provider.url, api_key="test", max_retries=0)

    with client.acquire("openai/manual", input_tokens=500, output_tokens=64) as lease:
        r = oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=64)
        assert lease.report_response(r).action == "done"
    used = r.usage.total_tokens

    with client.acquire("openai/manual", input_tokens=500, output_tokens=64) as lease:
        raw = oa.chat.completions.with_raw_response.create(model="m", messages=MESSAGES, max_tokens=64)
        lease.report_response(raw)
    used += raw.parse().usage.total_tokens
    settled(daemon, "openai/manual", used)
    assert "x-ratelimit-remaining-requests" in daemon.key("openai/manual").last_headers

    with client.acquire("anthropic/manual", input_tokens=500, output_tokens=64) as lease:
        m = an.messages.create(model="c", max_tokens=64, messages=MESSAGES)
        lease.report_response(m)
    settled(
        daemon,
        "anthropic/manual",
        m.usage.input_tokens + m.usage.cache_read_input_tokens + m.usage.output_tokens,
    )

    provider.faults(["insufficient_quota,count=1"])
    with client.acquire("openai/manual") as lease:
        try:
            oa.chat.completions.create(model="m", messages=MESSAGES, max_tokens=8)
        except openai.RateLimitError as e:
            assert lease.report_response(e).action == "give_up"

    provider.faults(["stream_error=overloaded_error,after_tokens=0,count=1"])
    with pytest.raises(anthropic.APIStatusError):
        with client.acquire("anthropic/manual") as lease:
            with an.messages.stream(model="c", max_tokens=8, messages=MESSAGES) as s:
                for _ in s:
                    pass
    # Left by the stream's error: reported as an overloaded error inside a 200, retryable.
    assert lease.advice is not None and lease.advice.action == "retry"
    assert daemon.key("anthropic/manual").rate_limited_total == 1

    with client.acquire("openai/manual") as lease:
        resp = httpx.post(
            provider.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES, "max_tokens": 4}
        )
        lease.report_response(resp)
    with client.acquire("openai/manual") as lease:
        resp2 = requests.post(
            provider.url + "/v1/chat/completions",
            json={"model": "m", "messages": MESSAGES, "max_tokens": 4},
            timeout=10,
        )
        lease.report_response(resp2)
    used += resp.json()["usage"]["total_tokens"] + resp2.json()["usage"]["total_tokens"]
    settled(daemon, "openai/manual", used)


def test_a_call_without_max_tokens_reserves_what_answers_produced(setup: Any) -> None:
    """The openai SDK as most frameworks use it, with no max_tokens: the first call reserves a
    bounded guess (the daemon's 1024, not the client's 4096), later ones what answers on the key produced, and each settles at what it produced
    even on a key that counts declared output as reserved."""
    daemon, provider, client = setup
    oa = openai_sync(provider, LimitedTransport(key="openai/undeclared", client=client))
    first = oa.chat.completions.create(model="gpt-test", messages=MESSAGES)
    assert first.usage is not None
    k = daemon.key("openai/undeclared")
    assert k.output_tokens_estimate == first.usage.completion_tokens == 12
    reserved_first = k.undeclared_tokens_reserved
    assert reserved_first == 0 and 1024 <= k.tokens_reserved < 4096, k
    for _ in range(5):
        oa.chat.completions.create(model="gpt-test", messages=MESSAGES)
    k = daemon.key("openai/undeclared")
    later = k.undeclared_tokens_reserved - reserved_first
    # Five more, each reserving its input and the 12 tokens answers produced: nowhere near 4096.
    assert later < 5 * 500, k
    # Settled at what was produced: reserved and used agree within 1.5x.
    assert 0 < k.undeclared_tokens_reserved <= 1.5 * k.undeclared_tokens_used, k
    # A declared max_tokens is still sent as declared.
    oa.chat.completions.create(model="gpt-test", messages=MESSAGES, max_tokens=300)
    k2 = daemon.key("openai/undeclared")
    assert k2.undeclared_tokens_reserved == k.undeclared_tokens_reserved


@pytest.mark.parametrize(
    "key, word",
    [
        ("openai/{modle}", "{modle}"),
        ("openai//x", "empty segment"),
        ("", "empty"),
        ("openai/{model}/{region}", "{region}"),
        ("openai/{model", "lone brace"),
    ],
)
def test_a_key_with_a_typo_fails_when_the_transport_is_built(key: str, word: str) -> None:
    for cls in (LimitedTransport, AsyncLimitedTransport):
        with pytest.raises(ValueError) as e:
            cls(key=key)
        assert word in str(e.value)
    assert LimitedTransport(key="openai/{model}").key == "openai/{model}"


def test_the_readme_example_under_contention_raises_no_rate_limit_error(
    daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    """The README's example as written (the transport's defaults, the SDK's max_retries=0): two
    models whose keys the daemon has never seen share one provider limit, 40 calls from 8 threads
    at once; the 429s the daemon lets through while it learns are retried as it advises, none
    reaches the caller."""
    import concurrent.futures

    provider = start_provider("--rpm", "600", "--burst-requests", "3", "--completion-tokens", "5")
    with llmctl.Client(daemon.socket) as client:
        oa = openai.OpenAI(
            base_url=provider.url + "/v1",
            api_key="test",
            http_client=httpx2.Client(transport=LimitedTransport(key="openai/{model}", client=client)),
            max_retries=0,
        )

        def call(i: int) -> str:
            try:
                oa.chat.completions.create(model=f"m{i % 2}", messages=MESSAGES, max_tokens=5)
                return "ok"
            except openai.RateLimitError:
                return "429"

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            results = list(pool.map(call, range(40)))
    assert results.count("ok") == 40, results
    # The provider did refuse some: the test is not one without contention.
    assert provider.stats()["responses"].get("429", 0) > 0, provider.stats()
