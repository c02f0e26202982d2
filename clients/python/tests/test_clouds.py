"""Cloud SDKs that name the model in the path, through llmctl's httpx transports, against the
real daemon and the fake provider's Bedrock, Vertex AI and Gemini APIs: the anthropic SDK's
AnthropicBedrock (SigV4 signed, its streams AWS event-stream frames) and AnthropicVertex, and
google-genai on the Gemini API and on Vertex AI, each limited on the model its path names,
settled at the provider's usage, and its throttles (no limit headers) retried on the daemon's
advice."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import struct
import sys
import zlib
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import anthropic
import google.oauth2.credentials
import httpx2
import openai
import pytest
from google import genai
from google.genai import types as genai_types
from workers import run_processes

import llmctl
from conftest import Daemon, Provider, Proxy, provider_tokens, settled
from llmctl._eventstream import EventStreamParser
from llmctl._sse import StreamWatcher
from llmctl.httpx import AsyncLimitedTransport, LimitedTransport

MODEL = "anthropic.claude-fake-v1:0"
KEY = f"bedrock/{MODEL}"
MESSAGES = [{"role": "user", "content": "Say something short about rate limits. " * 5}]


def bedrock(provider: Provider, transport: Any) -> anthropic.AnthropicBedrock:
    return anthropic.AnthropicBedrock(
        aws_access_key="AKIDEXAMPLE",
        aws_secret_key="secret",
        aws_region="us-east-1",
        base_url=provider.url,
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )


def test_anthropic_bedrock_is_limited_on_the_model_its_path_names(setup: Any) -> None:
    daemon, provider, client = setup
    advices: List[llmctl.Advice] = []
    transport = LimitedTransport(
        key="bedrock/{model}", client=client, on_advice=lambda r, a: advices.append(a)
    )
    br = bedrock(provider, transport)
    m = br.messages.create(model=MODEL, max_tokens=64, messages=MESSAGES)
    assert m.content[0].text
    u = m.usage
    assert provider_tokens(provider) == u.input_tokens + (u.cache_read_input_tokens or 0) + u.output_tokens
    # The model was in the path (/model/{id}/invoke, its colon encoded), not in the body.
    settled(daemon, KEY, provider_tokens(provider))
    assert [a.action for a in advices] == ["done"]


def test_an_anthropic_bedrock_stream_is_read_from_its_event_stream_frames(setup: Any) -> None:
    daemon, provider, client = setup
    br = bedrock(provider, LimitedTransport(key="bedrock/{model}", client=client))
    with br.messages.stream(model=MODEL, max_tokens=64, messages=MESSAGES) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text and final.usage.output_tokens == 12
    settled(daemon, KEY, provider_tokens(provider))


def test_async_anthropic_bedrock_plain_and_streamed(setup: Any) -> None:
    daemon, provider, client = setup

    async def run() -> None:
        async with llmctl.AsyncClient(daemon.socket, fail_mode="closed") as aclient:
            br = anthropic.AsyncAnthropicBedrock(
                aws_access_key="AKIDEXAMPLE",
                aws_secret_key="secret",
                aws_region="eu-west-1",
                base_url=provider.url,
                http_client=httpx2.AsyncClient(
                    transport=AsyncLimitedTransport(key="bedrock/{model}", client=aclient)
                ),
                max_retries=0,
            )
            await br.messages.create(model=MODEL, max_tokens=16, messages=MESSAGES)
            stream = await br.messages.create(model=MODEL, max_tokens=16, messages=MESSAGES, stream=True)
            kinds = [event.type async for event in stream]
            assert kinds[-1] == "message_stop"
            await br.close()

    asyncio.run(run())
    settled(daemon, KEY, provider_tokens(provider))
    assert provider.stats()["responses"] == {"200": 2}


CLAUDE_VERTEX = "claude-sonnet-4-5@20250929"


def vertex_claude(provider: Provider, transport: Any) -> anthropic.AnthropicVertex:
    return anthropic.AnthropicVertex(
        region="us-east5",
        project_id="p-1",
        access_token="token",
        base_url=provider.url + "/v1",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )


def test_anthropic_vertex_is_limited_on_the_model_its_path_names(setup: Any) -> None:
    daemon, provider, client = setup
    claude = vertex_claude(provider, LimitedTransport(key="vertex/{model}", client=client))
    m = claude.messages.create(model=CLAUDE_VERTEX, max_tokens=64, messages=MESSAGES)
    assert m.content[0].text
    settled(daemon, f"vertex/{CLAUDE_VERTEX}", provider_tokens(provider))
    with claude.messages.stream(model=CLAUDE_VERTEX, max_tokens=64, messages=MESSAGES) as stream:
        assert "".join(stream.text_stream)
    settled(daemon, f"vertex/{CLAUDE_VERTEX}", provider_tokens(provider))
    # Token counting (a model of its own, count-tokens) is no call to limit: it goes untouched.
    counted = claude.messages.count_tokens(model=CLAUDE_VERTEX, messages=MESSAGES)
    assert counted.input_tokens > 0
    assert provider.stats()["responses"] == {"200": 3}
    assert sorted(daemon.status()) == [f"vertex/{CLAUDE_VERTEX}"]


def gemini(provider: Provider, transport: Any, vertex: bool = False) -> genai.Client:
    options = genai_types.HttpOptions(base_url=provider.url, httpx_client=httpx2.Client(transport=transport))
    if vertex:
        return genai.Client(
            vertexai=True,
            project="p-1",
            location="us-central1",
            credentials=google.oauth2.credentials.Credentials("token"),
            http_options=options,
        )
    return genai.Client(api_key="key", http_options=options)


@pytest.mark.parametrize("where", ["gemini-api", "vertex"])
def test_google_genai_is_limited_on_the_model_its_path_names(setup: Any, where: str) -> None:
    daemon, provider, client = setup
    g = gemini(provider, LimitedTransport(key="gemini/{model}", client=client), vertex=where == "vertex")
    config = genai_types.GenerateContentConfig(max_output_tokens=64)
    r = g.models.generate_content(model="gemini-2.5-flash", contents="Say hi. " * 20, config=config)
    assert r.text and r.usage_metadata is not None
    assert r.usage_metadata.prompt_token_count + r.usage_metadata.candidates_token_count == provider_tokens(
        provider
    )
    settled(daemon, "gemini/gemini-2.5-flash", provider_tokens(provider))
    text = "".join(
        c.text or ""
        for c in g.models.generate_content_stream(model="gemini-2.5-pro", contents="Hi.", config=config)
    )
    assert text.startswith("tok")
    settled(
        daemon,
        "gemini/gemini-2.5-pro",
        provider_tokens(provider) - daemon.key("gemini/gemini-2.5-flash").tokens_used,
    )


def test_azure_openai_through_the_proxy_is_limited_per_deployment_and_its_throttle_retried(
    daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    """The openai SDK's AzureOpenAI given the proxy's route as its endpoint: the deployment in
    the path is the model, plain and streamed calls settle at the usage, and Azure's 429 (its
    delay in retry-after-ms) is retried inside the proxy, not by the SDK."""
    provider = start_provider("--api", "azure", "--completion-tokens", "8")
    proxy = Proxy(daemon, provider, f'[proxy.upstreams.azure]\nurl = "{provider.url}"\nkey = "azure"')
    try:
        azure = openai.AzureOpenAI(
            azure_endpoint=proxy.url + "/azure", api_key="key", api_version="2024-10-21", max_retries=0
        )
        r = azure.chat.completions.create(model="gpt-4o-prod", max_tokens=16, messages=MESSAGES)
        assert r.choices[0].message.content and r.usage is not None
        settled(daemon, "azure/gpt-4o-prod", provider_tokens(provider))
        stream = azure.chat.completions.create(
            model="gpt-4o-prod", max_tokens=16, messages=MESSAGES, stream=True
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        settled(daemon, "azure/gpt-4o-prod", provider_tokens(provider))
        # One throttle, as Azure words it: the proxy waits its retry-after-ms and asks again.
        provider.faults(["rate_limit,retry_after=1,count=1"])
        r = azure.chat.completions.create(model="gpt-4o-prod", max_tokens=16, messages=MESSAGES)
        assert r.choices[0].message.content
        assert provider.stats()["responses"] == {"200": 3, "429": 1}
        settled(daemon, "azure/gpt-4o-prod", provider_tokens(provider))
        # Without an api-version Azure has no such path, and says so.
        bare = openai.OpenAI(
            base_url=proxy.url + "/azure/openai/deployments/gpt-4o-prod", api_key="k", max_retries=0
        )
        with pytest.raises(openai.NotFoundError):
            bare.chat.completions.create(model="gpt-4o-prod", messages=MESSAGES)
    finally:
        proxy.close()


# Each cloud's call of a short answer, and the key it is limited on.
CALLS: Dict[str, Tuple[str, Callable[[Provider, Any], str]]] = {
    "bedrock": (
        KEY,
        lambda p, t: (
            bedrock(p, t).messages.create(model=MODEL, max_tokens=16, messages=MESSAGES).content[0].text
        ),
    ),
    "vertex-claude": (
        f"vertex/{CLAUDE_VERTEX}",
        lambda p, t: (
            vertex_claude(p, t)
            .messages.create(model=CLAUDE_VERTEX, max_tokens=16, messages=MESSAGES)
            .content[0]
            .text
        ),
    ),
    "gemini": (
        "gemini/gemini-2.5-flash",
        lambda p, t: (
            gemini(p, t).models.generate_content(model="gemini-2.5-flash", contents="Hi.").text or ""
        ),
    ),
}


@pytest.mark.parametrize("cloud", sorted(CALLS))
def test_a_throttle_without_headers_is_retried_on_the_daemons_advice(
    cloud: str, daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    key, call = CALLS[cloud]
    provider = start_provider("--fault", "rate_limit,count=1", "--completion-tokens", "4", "--rpm", "100000")
    with llmctl.Client(daemon.socket, fail_mode="closed") as client:
        advices: List[llmctl.Advice] = []
        template = key.split("/")[0] + "/{model}"
        transport = LimitedTransport(key=template, client=client, on_advice=lambda r, a: advices.append(a))
        assert call(provider, transport) == "tok tok tok tok"
        assert [a.action for a in advices] == ["retry", "done"], advices
        assert provider.stats()["responses"] == {"429": 1, "200": 1}
        assert daemon.key(key).rate_limited_total == 1


def frame(headers: List[Any], payload: bytes) -> bytes:
    """One AWS event-stream message (string headers only)."""
    raw = b"".join(
        bytes([len(n)]) + n.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode() for n, v in headers
    )
    total = 12 + len(raw) + len(payload) + 4
    prelude = struct.pack(">II", total, len(raw))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + raw + payload
    return head + struct.pack(">I", zlib.crc32(head))


def chunk(event: Any) -> bytes:
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(event).encode()).decode()}).encode()
    return frame([(":message-type", "event"), (":event-type", "chunk")], payload)


def test_event_stream_frames_are_read_split_anywhere_and_a_bad_one_stops_the_watching() -> None:
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 7, "output_tokens": 1}}}
    stop = {"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 7}}
    throttled = frame(
        [(":message-type", "exception"), (":exception-type", "throttlingException")],
        b'{"message":"Too many tokens, please wait before trying again."}',
    )
    stream = chunk(start) + chunk(stop) + throttled
    whole = EventStreamParser()
    whole.feed(stream)
    assert [json.loads(d) for _, d in whole.events[:2]] == [start, stop]
    assert json.loads(whole.events[2][1]) == {
        "error": {
            "type": "throttlingException",
            "message": "Too many tokens, please wait before trying again.",
        }
    }
    bytewise = EventStreamParser()
    for i in range(len(stream)):
        bytewise.feed(stream[i : i + 1])
    assert bytewise.events == whole.events and not bytewise.broken
    bad = bytearray(stream)
    bad[20] ^= 0xFF  # inside the first message: its checksum fails
    broken = EventStreamParser()
    broken.feed(bytes(bad))
    assert broken.broken and broken.events == []


def test_a_bedrock_stream_whose_model_names_no_usage_is_settled_at_its_invocation_metrics() -> None:
    metrics = {"inputTokenCount": 7, "outputTokenCount": 2, "cacheReadInputTokenCount": 3}
    stream = chunk({"generation": "tok tok"}) + chunk({"amazon-bedrock-invocationMetrics": metrics})
    watcher = StreamWatcher(200, {"content-type": "application/vnd.amazon.eventstream"})
    for i in range(len(stream)):
        watcher.feed(stream[i : i + 1])
    out = watcher.outcome()
    # Bedrock's input leaves out the cache's tokens; the daemon's counts them, the read as cached.
    assert (out.input_tokens, out.cached_input_tokens, out.output_tokens, out.usage_known) == (10, 3, 2, True)


PROCESSES = 8
THREADS = 6
# CLOUD_LOAD_JOBS=400 CLOUD_LOAD_SDKS=all for the figures in BENCHMARKS.md; the test command
# runs Azure's through the proxy (the three SDKs through the transport take its one path, their
# calls tested above, and boto3's load test, test_aws.py, learns the same headerless limit).
JOBS = int(os.environ.get("CLOUD_LOAD_JOBS", "120"))
RPS = 5
# The bound of the boto3 load test (test_aws.py): a limit no header states costs the cold herd's
# first refusals and the probe finding it again from above.
MAX_429_SHARE = 0.1
LOAD_KEYS = {
    "anthropic-bedrock": "bedrock/anthropic.claude-load-v1:0",
    "anthropic-vertex": "vertex/claude-load@1",
    "genai-vertex": "gemini/gemini-load",
    "azure-proxy": "azure/gpt-load",
}
# How the fake provider limits for each: as its cloud does (no headers on Bedrock and Vertex AI,
# Azure's one-second windows and retry-after-ms).
LOAD_CLOUDS = {
    "anthropic-bedrock": "bedrock",
    "anthropic-vertex": "vertex",
    "genai-vertex": "vertex",
    "azure-proxy": "azure",
}


LOAD_SDKS = os.environ.get("CLOUD_LOAD_SDKS", "azure-proxy")


@pytest.mark.parametrize("sdk", sorted(LOAD_KEYS) if LOAD_SDKS == "all" else LOAD_SDKS.split(","))
def test_processes_of_a_cloud_sdk_share_one_headerless_limit(
    sdk: str, daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    """PROCESSES processes of THREADS workers of one cloud SDK through the transport (or, for
    Azure, the openai SDK through the proxy), against a provider at RPS requests a second that
    limits as their cloud does: Bedrock's and Vertex AI's refusals with no limit headers,
    Azure's one-second windows."""
    provider = start_provider(
        "--api", LOAD_CLOUDS[sdk], "--rpm", str(RPS * 60), "--burst-requests", "5", "--completion-tokens", "4"
    )
    url, proxy = provider.url, None
    if sdk == "azure-proxy":
        proxy = Proxy(daemon, provider, f'[proxy.upstreams.azure]\nurl = "{provider.url}"\nkey = "azure"')
        url = proxy.url + "/azure"
    worker = str(Path(__file__).with_name("cloud_load_worker.py"))
    command = [sys.executable, worker, daemon.socket, url, sdk, str(JOBS // PROCESSES), str(THREADS)]
    try:
        started, results = run_processes([command] * PROCESSES, provider.reset, timeout=300)
    finally:
        if proxy is not None:
            proxy.close()
    stats = provider.stats()
    ok = sum(r["ok"] for r in results)
    wall = max(r["last_end"] for r in results) - started
    refused = int(stats["responses"].get("429", 0))
    run = {
        "ok": ok,
        "failed": sum(r["failed"] for r in results),
        "errors": [e for r in results for e in r["errors"]][:3],
        "requests": int(stats["requests"]),
        "429s": refused,
        "wall_s": round(wall, 2),
        # What the provider allowed: its burst at once, then RPS a second.
        "efficiency": round((ok - 5) / RPS / wall, 3),
    }
    print(f"\n{sdk} load, {PROCESSES} processes x {THREADS} threads, {JOBS} calls, {RPS}/s: {run}")
    assert run["failed"] == 0 and ok == JOBS, run
    assert refused <= MAX_429_SHARE * run["requests"], run
    k = daemon.key(LOAD_KEYS[sdk])
    provider_tokens = int(stats["input_tokens"]) + int(stats["output_tokens"])
    assert (k.tokens_used, k.tokens_outstanding, k.in_flight) == (provider_tokens, 0, 0), k
