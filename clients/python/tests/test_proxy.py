"""The official SDKs pointed at `llmctl proxy` by base URL alone (no llmctl import in the call):
plain and streamed, each call limited and settled at its usage, retries done once, inside the
proxy."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import anthropic
import openai
import pytest

from conftest import Daemon, Provider, Proxy, wait_until

MESSAGES = [{"role": "user", "content": "Say something short about rate limits."}]


@pytest.fixture
def setup(daemon: Daemon, start_provider: Callable[..., Provider]) -> Iterator[Any]:
    provider = start_provider("--cache-share", "0.5", "--completion-tokens", "12", "--rpm", "100000")
    proxy = Proxy(daemon, provider)
    yield daemon, provider, proxy
    proxy.close()


def settled(daemon: Daemon, key: str, tokens: int) -> None:
    def done() -> bool:
        k = daemon.status().get(key)
        return k is not None and (k.tokens_used, k.tokens_outstanding, k.in_flight) == (tokens, 0, 0)

    wait_until(done, 10, f"{key} settled at {tokens} tokens")


def test_openai_sdk_plain_and_streamed_through_the_proxy(setup: Any) -> None:
    daemon, provider, proxy = setup
    oa = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key="test")
    r = oa.chat.completions.create(model="gpt-test", messages=MESSAGES, max_tokens=64)
    assert r.usage is not None
    settled(daemon, "openai/gpt-test", r.usage.prompt_tokens + r.usage.completion_tokens)
    stream = oa.chat.completions.create(
        model="gpt-stream",
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
        if chunk.usage:
            usage = chunk.usage
    assert usage is not None and text
    settled(daemon, "openai/gpt-stream", usage.prompt_tokens + usage.completion_tokens)
    clients = {c.client_id for c in daemon.raw_status().clients}
    assert "proxy:openai" in clients, clients


def test_anthropic_sdk_plain_and_streamed_through_the_proxy(setup: Any) -> None:
    daemon, provider, proxy = setup
    an = anthropic.Anthropic(base_url=proxy.url + "/anthropic", api_key="test")
    m = an.messages.create(model="claude-test", max_tokens=64, messages=MESSAGES)
    u = m.usage
    all_input = u.input_tokens + (u.cache_read_input_tokens or 0) + (u.cache_creation_input_tokens or 0)
    settled(daemon, "anthropic/claude-test", all_input + u.output_tokens)
    with an.messages.stream(model="claude-stream", max_tokens=64, messages=MESSAGES) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    assert text
    fu = final.usage
    total = fu.input_tokens + (fu.cache_read_input_tokens or 0) + (fu.cache_creation_input_tokens or 0)
    settled(daemon, "anthropic/claude-stream", total + fu.output_tokens)


def test_a_429_is_retried_once_inside_the_proxy_and_never_by_the_sdk(setup: Any) -> None:
    daemon, provider, proxy = setup
    provider.faults(["rate_limit,retry_after=1,count=1"])
    oa = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key="test")  # the SDK's own retries on
    r = oa.chat.completions.create(model="gpt-retry", messages=MESSAGES, max_tokens=16)
    assert r.choices
    stats = provider.stats()
    assert (stats["responses"].get("429"), stats["responses"].get("200")) == (1, 1), stats
    # An answer not worth retrying reaches the SDK marked x-should-retry: false; it obeys.
    provider.faults(["status=400"])
    with pytest.raises(openai.BadRequestError):
        oa.chat.completions.create(model="gpt-retry", messages=MESSAGES, max_tokens=16)
    assert provider.stats()["responses"].get("400") == 1, "neither the proxy nor the SDK retried"


def test_not_granted_is_the_sdks_rate_limit_error_and_the_sdk_does_not_retry(
    start_daemon: Callable[..., Daemon], start_provider: Callable[..., Provider]
) -> None:
    daemon = start_daemon('[keys."anthropic/slow"]\nrequests_per_minute = 2\n')
    provider = start_provider()
    proxy = Proxy(daemon, provider, 'max_wait = "300ms"')
    try:
        an = anthropic.Anthropic(base_url=proxy.url + "/anthropic", api_key="test")  # max_retries 2
        with pytest.raises(anthropic.RateLimitError) as e:
            an.messages.create(model="slow", max_tokens=16, messages=MESSAGES)
        assert e.value.response.headers["x-should-retry"] == "false"
        assert int(e.value.response.headers["retry-after-ms"]) > 300
        assert "not granted" in str(e.value)
        k = daemon.key("anthropic/slow")
        assert (k.requests_total, k.rejected_total) == (1, 1), "the SDK asked once"
        assert provider.stats()["requests"] == 0
    finally:
        proxy.close()
