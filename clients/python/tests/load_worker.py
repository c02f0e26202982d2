"""One process of the load test (test_load.py): THREADS workers share one OpenAI client whose
transport asks llmctl before every request. Prints "ready", waits for a line on stdin, runs its
jobs, then prints one JSON line with what happened."""

from __future__ import annotations

import sys

import httpx2
import openai
from workers import run_jobs

import llmctl
from llmctl.httpx import LimitedTransport


def main() -> None:
    socket, url, key = sys.argv[1], sys.argv[2], sys.argv[3]
    jobs, threads = int(sys.argv[4]), int(sys.argv[5])
    client = llmctl.Client(socket, fail_mode="closed")
    assert client.wait_connected(30), "no session with the daemon"
    transport = LimitedTransport(key=key, client=client, max_retries=5)
    oa = openai.OpenAI(
        base_url=url + "/v1",
        api_key="test",
        http_client=httpx2.Client(transport=transport, timeout=60),
        max_retries=0,
    )
    # Load the SDK's response models now, not on the clock.
    openai.types.chat.ChatCompletion.model_validate(
        {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    )

    def call() -> bool:
        r = oa.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "one short answer please"}],
            max_tokens=16,
        )
        return bool(r.choices)

    try:
        run_jobs(jobs, threads, call)
    finally:
        client.close()


if __name__ == "__main__":
    main()
