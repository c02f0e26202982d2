"""boto3's bedrock-runtime client through `llmctl.aws.limit`, against the real daemon and the
fake provider's Bedrock API (its own throttles, no limit headers): every call limited, settled at
the provider's usage (Converse, ConverseStream, InvokeModel, InvokeModelWithResponseStream), and
botocore's own retries replaced by the daemon's advice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

import boto3
import botocore.config
import botocore.exceptions
import pytest
from workers import run_processes

import llmctl
import llmctl.aws
from conftest import Daemon, Provider, provider_tokens, settled, wait_until

MODEL = "anthropic.claude-fake-v1:0"
KEY = f"bedrock/{MODEL}"
MESSAGES = [{"role": "user", "content": [{"text": "Say something short about rate limits. " * 5}]}]


def bedrock(provider: Provider, **config: Any) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=provider.url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        config=botocore.config.Config(**config) if config else None,
    )


def test_converse_is_limited_and_settled_at_its_usage(setup: Any) -> None:
    daemon, provider, client = setup
    advices: List[llmctl.Advice] = []
    aws = llmctl.aws.limit(bedrock(provider), llmctl=client, on_advice=lambda key, a: advices.append(a))
    r = aws.converse(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 64})
    assert r["output"]["message"]["content"][0]["text"].startswith("tok")
    assert [a.action for a in advices] == ["done"]
    # The provider's usage, its cache reads included.
    u = r["usage"]
    assert provider_tokens(provider) == u["inputTokens"] + u["cacheReadInputTokens"] + u["outputTokens"]
    settled(daemon, KEY, provider_tokens(provider))
    # Hooked once however often it is asked.
    assert llmctl.aws.limit(aws, llmctl=client) is aws


def test_a_converse_stream_is_settled_as_the_caller_reads_it(setup: Any) -> None:
    daemon, provider, client = setup
    aws = llmctl.aws.limit(bedrock(provider), llmctl=client)
    r = aws.converse_stream(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 64})
    events = list(r["stream"])
    assert "metadata" in events[-1]
    text = "".join(e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e)
    assert text.startswith("tok")
    settled(daemon, KEY, provider_tokens(provider))


def test_a_throttle_inside_a_stream_is_reported_as_the_429_it_is(setup: Any) -> None:
    """conformance/bedrock_stream_errors.json: Bedrock's throttlingException mid-stream."""
    daemon, provider, client = setup
    aws = llmctl.aws.limit(bedrock(provider), "bedrock/midstream", llmctl=client, max_retries=0)
    provider.faults(["stream_error=throttlingException,after_tokens=2,count=1"])
    r = aws.converse_stream(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 64})
    with pytest.raises(botocore.exceptions.EventStreamError):
        for _ in r["stream"]:
            pass
    k = wait_until(
        lambda: (lambda k: k if k.in_flight == 0 else None)(daemon.key("bedrock/midstream")), 5, "reported"
    )
    assert k.rate_limited_total == 1, k


def test_invoke_model_and_its_stream_are_settled_at_their_usage(setup: Any) -> None:
    daemon, provider, client = setup
    aws = llmctl.aws.limit(bedrock(provider), key="bedrock/{region}/{model}", llmctl=client)
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 32,
        "messages": [{"role": "user", "content": "hi there"}],
    }
    r = aws.invoke_model(modelId=MODEL, body=json.dumps(body))
    answer = json.loads(r["body"].read())
    assert answer["type"] == "message"
    key = f"bedrock/us-east-1/{MODEL}"
    settled(daemon, key, provider_tokens(provider))
    r = aws.invoke_model_with_response_stream(modelId=MODEL, body=json.dumps(body))
    chunks = [json.loads(e["chunk"]["bytes"]) for e in r["body"]]
    assert chunks[-1]["type"] == "message_stop"
    settled(daemon, key, provider_tokens(provider))


def test_a_throttle_is_retried_on_the_daemons_advice_not_botocores(
    daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    provider = start_provider("--fault", "rate_limit,count=1", "--completion-tokens", "4", "--rpm", "100000")
    with llmctl.Client(daemon.socket, fail_mode="closed") as client:
        advices: List[llmctl.Advice] = []
        aws = llmctl.aws.limit(bedrock(provider), llmctl=client, on_advice=lambda key, a: advices.append(a))
        r = aws.converse(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 16})
        assert r["usage"]["outputTokens"] == 4
        # One refusal, retried once after the daemon's delay.
        assert [a.action for a in advices] == ["retry", "done"], advices
        assert provider.stats()["responses"] == {"429": 1, "200": 1}
        # The daemon counted the refusal on the key, for every process on the host.
        assert daemon.key(KEY).rate_limited_total == 1


def test_with_max_retries_0_a_throttle_is_the_callers_after_one_attempt(
    daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    # botocore would have tried 5 times (legacy mode) or 3 (standard): the daemon's rule is the one.
    provider = start_provider("--fault", "rate_limit", "--rpm", "100000")
    with llmctl.Client(daemon.socket, fail_mode="closed") as client:
        aws = llmctl.aws.limit(bedrock(provider, retries={"mode": "standard"}), llmctl=client, max_retries=0)
        with pytest.raises(aws.exceptions.ThrottlingException) as e:
            aws.converse(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 16})
        assert "Too many requests" in str(e.value)
        assert provider.stats()["responses"] == {"429": 1}


def test_not_granted_in_time_is_the_clients_own_throttling_exception(
    start_daemon: Callable[..., Daemon], start_provider: Callable[..., Provider]
) -> None:
    daemon = start_daemon(f'[keys."{KEY}"]\nmax_concurrency = 1\n')
    provider = start_provider("--rpm", "100000", "--completion-tokens", "4")
    with llmctl.Client(daemon.socket, fail_mode="closed") as client:
        held = client.acquire(KEY)
        aws = llmctl.aws.limit(bedrock(provider), llmctl=client, max_wait=0.2)
        with pytest.raises(aws.exceptions.ThrottlingException) as e:
            aws.converse(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 16})
        assert e.value.response["llmctl"]["key"] == KEY
        assert e.value.response["llmctl"]["reason_code"] == "concurrency"
        assert provider.stats()["responses"] == {}
        held.report(status=200)
        # Once the slot is free the call goes.
        aws.converse(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 16})


def test_other_clients_and_operations_are_refused_or_untouched(setup: Any) -> None:
    _, provider, client = setup
    with pytest.raises(TypeError, match="bedrock-runtime"):
        llmctl.aws.limit(boto3.client("s3", region_name="us-east-1"), llmctl=client)
    with pytest.raises(ValueError, match="max_retries"):
        llmctl.aws.limit(bedrock(provider), llmctl=client, max_retries=-1)
    assert "Converse" in llmctl.aws.LIMITED_OPERATIONS
    with pytest.raises(botocore.exceptions.ClientError):
        # An operation nothing limits goes as botocore sends it (the fake serves no such path).
        llmctl.aws.limit(bedrock(provider, retries={"max_attempts": 1}), llmctl=client).get_async_invoke(
            invocationArn="arn:aws:bedrock:us-east-1:123456789012:async-invoke/x"
        )


PROCESSES = 8
THREADS = 6
# 15 per process; BEDROCK_LOAD_JOBS=400 for the figure in BENCHMARKS.md.
JOBS = int(os.environ.get("BEDROCK_LOAD_JOBS", "120"))
RPS = 5
# Refusals a limit no header states costs: the cold herd's first ones, then the probe finding
# the limit again above it (4.1 % of 400 calls, 4.8 % of 120, measured; the 2 % aimed at is not
# reached yet). Bound here at twice that, against 91 % of requests refused without llmctl.
MAX_429_SHARE = 0.1


def bedrock_load(daemon: Daemon, provider: Provider, mode: str) -> Dict[str, Any]:
    """PROCESSES processes of THREADS workers of boto3 `converse` on one model against a
    provider at RPS requests a second, with Bedrock's throttles and no limit headers."""
    worker = str(Path(__file__).with_name("aws_load_worker.py"))
    command = [
        sys.executable,
        worker,
        daemon.socket,
        provider.url,
        mode,
        str(JOBS // PROCESSES),
        str(THREADS),
    ]
    started, results = run_processes([command] * PROCESSES, provider.reset, timeout=300)
    stats = provider.stats()
    wall = max(r["last_end"] for r in results) - started
    ok = sum(r["ok"] for r in results)
    # What the provider allowed: its burst at once, then RPS a second.
    ideal = (ok - 5) / RPS
    return {
        "mode": mode,
        "ok": ok,
        "failed": sum(r["failed"] for r in results),
        "errors": [e for r in results for e in r["errors"]][:3],
        "requests": int(stats["requests"]),
        "429s": int(stats["responses"].get("429", 0)),
        "wall_s": round(wall, 2),
        "efficiency": round(ideal / wall, 3) if wall > 0 else 0.0,
        "provider_tokens": int(stats["input_tokens"]) + int(stats["output_tokens"]),
    }


def test_processes_of_boto3_threads_share_one_headerless_bedrock_limit(
    daemon: Daemon, start_provider: Callable[..., Provider]
) -> None:
    provider = start_provider("--rpm", str(RPS * 60), "--burst-requests", "5", "--completion-tokens", "4")
    plain = bedrock_load(daemon, provider, "plain")
    limited = bedrock_load(daemon, provider, "llmctl")
    for run in (plain, limited):
        print(
            f"\nbedrock load, {PROCESSES} processes x {THREADS} threads, {JOBS} converse calls, {RPS}/s: {run}"
        )
    assert limited["failed"] == 0 and limited["ok"] == JOBS, limited
    assert limited["429s"] <= MAX_429_SHARE * limited["requests"], limited
    # Without it, botocore's retries alone fail jobs (89 of 120 here).
    assert plain["failed"] > 0, plain
    # Settled at what the provider counted: its usage, nothing left outstanding.
    k = daemon.key("bedrock/anthropic.claude-load-v1:0")
    assert (k.tokens_used, k.tokens_outstanding, k.in_flight) == (limited["provider_tokens"], 0, 0), k


def test_a_call_that_cannot_be_signed_gives_its_lease_back(
    setup: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon, provider, client = setup
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    unsigned = boto3.client("bedrock-runtime", endpoint_url=provider.url, region_name="us-east-1")
    aws = llmctl.aws.limit(unsigned, llmctl=client)
    with pytest.raises(botocore.exceptions.NoCredentialsError):
        aws.converse(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 16})
    # Leased before signing, and given back when signing failed: nothing held, nothing sent.
    k = daemon.key(KEY)
    assert (k.in_flight, k.tokens_outstanding) == (0, 0), k
    assert provider.stats()["requests"] == 0


def test_a_stream_left_early_or_never_read_is_reported_as_read(setup: Any) -> None:
    daemon, provider, client = setup
    advices: List[llmctl.Advice] = []
    aws = llmctl.aws.limit(bedrock(provider), llmctl=client, on_advice=lambda key, a: advices.append(a))
    r = aws.converse_stream(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 64})
    for event in r["stream"]:
        if "contentBlockDelta" in event:
            break
    assert [a.action for a in advices] == ["done"], advices
    k = daemon.key(KEY)
    assert (k.in_flight, k.tokens_outstanding) == (0, 0), k
    # A stream nobody reads is reported once it is dropped.
    r = aws.converse_stream(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 64})
    del r
    import gc

    gc.collect()
    wait_until(lambda: daemon.key(KEY).in_flight == 0, 10, "the dropped stream's lease reported")
    assert [a.action for a in advices] == ["done", "done"], advices


def test_a_call_that_can_never_fit_is_a_validation_error_not_a_throttle(
    start_daemon: Callable[..., Daemon], start_provider: Callable[..., Provider]
) -> None:
    daemon = start_daemon(f'[keys."{KEY}"]\ntokens_per_minute = 100\n')
    provider = start_provider("--rpm", "100000")
    with llmctl.Client(daemon.socket, fail_mode="closed") as client:
        aws = llmctl.aws.limit(bedrock(provider), llmctl=client, max_wait=1)
        with pytest.raises(aws.exceptions.ValidationException) as e:
            aws.converse(modelId=MODEL, messages=MESSAGES, inferenceConfig={"maxTokens": 4000})
        assert e.value.response["llmctl"]["reason_code"] == "too_large"
        assert provider.stats()["requests"] == 0


OLD_BOTOCORE_CALL = """
import sys, boto3, llmctl, llmctl.aws
socket, url, model = sys.argv[1:4]
client = boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1",
                      aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret")
aws = llmctl.aws.limit(client, llmctl=llmctl.Client(socket, fail_mode="closed"))
r = aws.converse(modelId=model, messages=[{"role": "user", "content": [{"text": "hi"}]}],
                 inferenceConfig={"maxTokens": 16})
print(r["stopReason"])
"""


def test_each_botocore_is_told_not_to_retry_as_it_reads_it(setup: Any, tmp_path: Path) -> None:
    """botocore before 1.43.3 took a needs-retry handler's False for a delay of 0 and sent the
    call again, forever: there "do not retry" is None. Run on the real botocore 1.43.2 (a venv
    of its own, scripts/python-env): a successful call is sent once, and limit says why its
    own retries still apply."""
    daemon, provider, _ = setup
    assert llmctl.aws.no_retry_answer("1.43.2") is None
    assert llmctl.aws.no_retry_answer("1.43.3") is False
    assert llmctl.aws.no_retry_answer("1.44.8") is False
    assert llmctl.aws.no_retry_answer("2.0.0.dev1") is False
    python = Path(__file__).resolve().parents[3] / ".venv-botocore-old" / "bin" / "python"
    app = tmp_path / "app.py"
    app.write_text(OLD_BOTOCORE_CALL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    try:
        r = subprocess.run(
            [str(python), str(app), daemon.socket, provider.url, MODEL],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the call never ended: the provider saw {provider.stats()['requests']} requests")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "end_turn", r.stdout
    assert provider.stats()["requests"] == 1, "a success is sent once"
    assert "botocore 1.43.2 cannot be told not to retry" in r.stderr, r.stderr
    settled(daemon, KEY, provider_tokens(provider))
