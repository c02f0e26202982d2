"""One simulated client process that calls the provider through the real Python transport,
exactly as the README shows it: the openai SDK with an httpx2 client whose transport is
``llmctl.httpx.AsyncLimitedTransport``, ``max_retries=0`` on the SDK, no max_tokens unless the
job declares one. Reads a worker spec (JSON) on stdin, writes a worker result (JSON) on stdout,
as ``llmctl simulate-worker`` does, after a line ``ready`` once it has imported what it calls
with."""

import asyncio
import json
import sys
import time

import httpx2
import openai

# The SDK imports a resource's module when the resource is first named, and the types of its
# answers with it: imported here, so that the run's first requests do not (a long-lived
# process has them).
import openai.resources.chat.completions.completions  # noqa: F401
import openai.types.chat  # noqa: F401

import llmctl
from llmctl.httpx import AsyncLimitedTransport

PER_MESSAGE = 3


def now_ms() -> int:
    return int(time.time() * 1000)


async def main() -> None:
    # Imported: the run starts once every worker has said so.
    print("ready", flush=True)
    spec = json.load(sys.stdin)
    result = {"ok": 0, "failed": 0, "attempts": 0, "rate_limited": 0, "end_unix_ms": 0, "waits": [], "errors": []}
    client = llmctl.AsyncClient(spec["socket"], fail_mode="closed")
    transport = AsyncLimitedTransport(key=spec["key"], client=client)
    sdk = openai.AsyncOpenAI(
        base_url=spec["provider_url"] + "/v1",
        api_key="sim",
        http_client=httpx2.AsyncClient(transport=transport, timeout=60),
        max_retries=0,
    )
    jobs = list(spec["jobs"])
    await asyncio.sleep(max(0, spec["start_at_unix_ms"] - now_ms()) / 1000)
    start = time.monotonic()

    async def work() -> None:
        while jobs:
            job = jobs.pop(0)
            chars = 4 * max(1, job["input_tokens"] - PER_MESSAGE)
            args = {"model": "sim-model", "messages": [{"role": "user", "content": "x" * chars}]}
            if not job.get("undeclared"):
                args["max_tokens"] = job["max_tokens"]
            sent = time.monotonic()
            result["attempts"] += 1
            try:
                await sdk.chat.completions.create(**args)
                result["ok"] += 1
                result["waits"].append([bool(job.get("interactive")), int((sent - start) * 1000)])
            except Exception as e:  # every failure reaching the caller is a failed job
                result["failed"] += 1
                if isinstance(e, openai.RateLimitError):
                    result["rate_limited"] += 1
                if len(result["errors"]) < 5:
                    result["errors"].append(f"{type(e).__name__}: {e}"[:200])

    await asyncio.gather(*(work() for _ in range(spec["workers"])))
    result["end_unix_ms"] = now_ms()
    await client.aclose()
    json.dump(result, sys.stdout)


asyncio.run(main())
