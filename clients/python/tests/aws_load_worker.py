"""One process of the Bedrock load test (test_aws.py): THREADS workers share one boto3
bedrock-runtime client, limited by `llmctl.aws.limit` or not ("plain": botocore's own retries).
Prints "ready", waits for a line on stdin, runs its jobs, then prints one JSON line with what
happened."""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from typing import Any, Dict, List

import boto3

import llmctl
import llmctl.aws


def main() -> None:
    socket, url, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    jobs, threads = int(sys.argv[4]), int(sys.argv[5])
    bedrock = boto3.client(
        "bedrock-runtime",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
    )
    client = None
    if mode == "llmctl":
        client = llmctl.Client(socket, fail_mode="closed")
        assert client.wait_connected(30), "no session with the daemon"
        llmctl.aws.limit(bedrock, key="bedrock/{model}", llmctl=client)
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
                r = bedrock.converse(
                    modelId="anthropic.claude-load-v1:0",
                    messages=[{"role": "user", "content": [{"text": "one short answer please"}]}],
                    inferenceConfig={"maxTokens": 16},
                )
                ok = bool(r["output"]["message"]["content"])
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
    if client is not None:
        client.close()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
