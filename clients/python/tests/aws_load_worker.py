"""One process of the Bedrock load test (test_aws.py): THREADS workers share one boto3
bedrock-runtime client, limited by `llmctl.aws.limit` or not ("plain": botocore's own retries).
Prints "ready", waits for a line on stdin, runs its jobs, then prints one JSON line with what
happened."""

from __future__ import annotations

import sys

import boto3
from workers import run_jobs

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

    def call() -> bool:
        r = bedrock.converse(
            modelId="anthropic.claude-load-v1:0",
            messages=[{"role": "user", "content": [{"text": "one short answer please"}]}],
            inferenceConfig={"maxTokens": 16},
        )
        return bool(r["output"]["message"]["content"])

    try:
        run_jobs(jobs, threads, call)
    finally:
        if client is not None:
            client.close()


if __name__ == "__main__":
    main()
