"""One process of the load test (test_load.py): THREADS workers share one OpenAI client whose
transport asks llmctl before every request. Prints "ready", waits for a line on stdin, runs its
jobs, then prints one JSON line with what happened."""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from typing import Any, Dict, List

import httpx2
import openai

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
    todo: "queue.Queue[int]" = queue.Queue()
    for i in range(jobs):
        todo.put(i)
    lock = threading.Lock()
    result: Dict[str, Any] = {"ok": 0, "failed": 0, "errors": [], "last_end": 0.0}
    errors: List[str] = result["errors"]

    def work() -> None:
        while True:
            try:
                todo.get_nowait()
            except queue.Empty:
                return
            try:
                r = oa.chat.completions.create(
                    model="m",
                    messages=[{"role": "user", "content": "one short answer please"}],
                    max_tokens=16,
                )
                ok = bool(r.choices)
                err = ""
            except Exception as e:  # every failure is counted and shown
                ok, err = False, repr(e)[:300]
            with lock:
                result["ok" if ok else "failed"] += 1
                if err and len(errors) < 5:
                    errors.append(err)
                result["last_end"] = max(result["last_end"], time.time())

    workers = [threading.Thread(target=work) for _ in range(threads)]
    print("ready", flush=True)
    sys.stdin.readline()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    client.close()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
