"""A chat stream whose caller did not ask for its usage (LangChain with a client or a base URL,
curl, most agent SDKs): the transports ask for it, settle at it, and hand the caller the stream
it would have had; an upstream that refuses the option is asked once (conformance/stream_usage.json)."""

from __future__ import annotations

import asyncio
from typing import Any, Callable, List

import httpx2
import openai
import pytest

import llmctl
from conftest import Daemon, Provider, wait_until
from llmctl.httpx import AsyncLimitedTransport, LimitedTransport

MESSAGES = [{"role": "user", "content": "Say something short about rate limits. " * 5}]


def provider_tokens(provider: Provider) -> int:
    s = provider.stats()
    return int(s["input_tokens"]) + int(s["output_tokens"])


def settled_at(daemon: Daemon, key: str, tokens: int) -> None:
    def done() -> bool:
        k = daemon.key(key)
        return bool(k.tokens_outstanding == 0 and k.in_flight == 0 and k.tokens_used == tokens)

    wait_until(done, 10, f"{key} settled at {tokens} tokens")


def sync_openai(provider: Provider, client: llmctl.Client) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=provider.url + "/v1",
        api_key="test",
        max_retries=0,
        http_client=httpx2.Client(transport=LimitedTransport(key="openai/{model}", client=client)),
    )


def chunks_seen(stream: Any) -> List[Any]:
    return list(stream)


def test_a_sync_stream_that_did_not_ask_is_settled_at_its_usage_and_sees_none(
    daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    provider = start_provider("--completion-tokens", "9")
    with llmctl.Client(daemon.socket, fail_mode="closed") as client:
        oa = sync_openai(provider, client)
        chunks = chunks_seen(oa.chat.completions.create(model="gpt-s", messages=MESSAGES, stream=True))
    assert chunks and all(c.choices for c in chunks), "no usage-only chunk reached the caller"
    assert all(c.usage is None for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks).strip()
    settled_at(daemon, "openai/gpt-s", provider_tokens(provider))
    assert daemon.key("openai/gpt-s").settled_at_estimate_total == 0


def test_an_async_stream_that_did_not_ask_is_settled_at_its_usage(
    daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    provider = start_provider("--completion-tokens", "7")

    async def main() -> List[Any]:
        async with llmctl.AsyncClient(daemon.socket, fail_mode="closed") as client:
            oa = openai.AsyncOpenAI(
                base_url=provider.url + "/v1",
                api_key="test",
                max_retries=0,
                http_client=httpx2.AsyncClient(
                    transport=AsyncLimitedTransport(key="openai/{model}", client=client)
                ),
            )
            stream = await oa.chat.completions.create(model="gpt-a", messages=MESSAGES, stream=True)
            return [c async for c in stream]

    chunks = asyncio.run(main())
    assert chunks and all(c.choices and c.usage is None for c in chunks)
    settled_at(daemon, "openai/gpt-a", provider_tokens(provider))


def test_a_caller_that_asked_gets_its_usage_chunk_as_before(
    daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    provider = start_provider()
    with llmctl.Client(daemon.socket, fail_mode="closed") as client:
        oa = sync_openai(provider, client)
        chunks = chunks_seen(
            oa.chat.completions.create(
                model="gpt-k", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
            )
        )
    assert chunks[-1].usage is not None and not chunks[-1].choices


def test_an_upstream_refusing_stream_options_is_asked_once(
    daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    provider = start_provider("--refuse-stream-options")
    with llmctl.Client(daemon.socket, fail_mode="closed") as client:
        oa = sync_openai(provider, client)
        for _ in range(2):
            chunks = chunks_seen(oa.chat.completions.create(model="gpt-r", messages=MESSAGES, stream=True))
            assert chunks and any(c.choices and c.choices[0].delta.content for c in chunks)
    responses = provider.stats()["responses"]
    assert (responses.get("400"), responses.get("200")) == (1, 2), responses
    wait_until(
        lambda: daemon.key("openai/gpt-r").settled_at_estimate_total == 2,
        10,
        "both streams settled at the estimate, and status saying so",
    )


def test_a_refusal_of_the_callers_own_stream_options_does_not_stop_asking_the_upstream(
    daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    provider = start_provider("--refuse-stream-options")
    with llmctl.Client(daemon.socket, fail_mode="closed") as client:
        oa = sync_openai(provider, client)
        with pytest.raises(openai.BadRequestError):
            oa.chat.completions.create(
                model="gpt-o", messages=MESSAGES, stream=True, stream_options={"include_obfuscation": False}
            )
        assert provider.stats()["responses"].get("400") == 2, (
            "asked with the option, then as the caller wrote it"
        )
        chunks_seen(oa.chat.completions.create(model="gpt-o", messages=MESSAGES, stream=True))
    responses = provider.stats()["responses"]
    assert (responses.get("400"), responses.get("200")) == (3, 1), "the next stream was asked for its usage"
