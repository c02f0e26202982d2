"""One process of the clouds' load test (test_clouds.py): THREADS workers share one client of a
cloud SDK (AnthropicBedrock, AnthropicVertex or google-genai on Vertex AI) whose httpx client
goes through `llmctl.httpx.LimitedTransport`, or the openai SDK's AzureOpenAI pointed at
`llmctl proxy` by its endpoint alone (`azure-proxy`). Prints "ready", waits for a line on stdin,
runs its jobs, then prints one JSON line with what happened."""

from __future__ import annotations

import sys
from typing import Any, Callable

import anthropic
import google.oauth2.credentials
import httpx2
import openai
from google import genai
from google.genai import types as genai_types
from workers import run_jobs

import llmctl
from llmctl.httpx import LimitedTransport

PROMPT = "one short answer please"


def caller(sdk: str, url: str, http: Any) -> Callable[[], bool]:
    """A call of one short answer with `sdk`, through `http`; whether it answered."""
    messages = [{"role": "user", "content": PROMPT}]
    if sdk == "anthropic-bedrock":
        bedrock = anthropic.AnthropicBedrock(
            aws_access_key="AKIDEXAMPLE",
            aws_secret_key="secret",
            aws_region="us-east-1",
            base_url=url,
            http_client=http,
            max_retries=0,
        )
        return lambda: bool(
            bedrock.messages.create(
                model="anthropic.claude-load-v1:0", max_tokens=16, messages=messages
            ).content
        )
    if sdk == "anthropic-vertex":
        vertex = anthropic.AnthropicVertex(
            region="us-east5",
            project_id="p-1",
            access_token="token",
            base_url=url + "/v1",
            http_client=http,
            max_retries=0,
        )
        return lambda: bool(
            vertex.messages.create(model="claude-load@1", max_tokens=16, messages=messages).content
        )
    if sdk == "azure-proxy":
        # No llmctl here: the endpoint is the proxy's route to the deployment's resource, and
        # the SDK keeps its own retries as a user's would.
        azure = openai.AzureOpenAI(azure_endpoint=url, api_key="key", api_version="2024-10-21")
        return lambda: bool(
            azure.chat.completions.create(model="gpt-load", max_tokens=16, messages=messages).choices
        )
    assert sdk == "genai-vertex", sdk
    gemini = genai.Client(
        vertexai=True,
        project="p-1",
        location="us-central1",
        credentials=google.oauth2.credentials.Credentials("token"),
        http_options=genai_types.HttpOptions(base_url=url, httpx_client=http),
    )
    config = genai_types.GenerateContentConfig(max_output_tokens=16)
    return lambda: bool(
        gemini.models.generate_content(model="gemini-load", contents=PROMPT, config=config).text
    )


def main() -> None:
    socket, url, sdk = sys.argv[1], sys.argv[2], sys.argv[3]
    jobs, threads = int(sys.argv[4]), int(sys.argv[5])
    if sdk == "azure-proxy":
        run_jobs(jobs, threads, caller(sdk, url, None))
        return
    client = llmctl.Client(socket, fail_mode="closed")
    assert client.wait_connected(30), "no session with the daemon"
    key = {"anthropic-bedrock": "bedrock/{model}", "anthropic-vertex": "vertex/{model}"}.get(
        sdk, "gemini/{model}"
    )
    http = httpx2.Client(transport=LimitedTransport(key=key, client=client), timeout=120)
    try:
        run_jobs(jobs, threads, caller(sdk, url, http))
    finally:
        http.close()
        client.close()


if __name__ == "__main__":
    main()
