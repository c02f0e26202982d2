"""The README's framework recipes ("Frameworks"), each run as written in a venv of the pinned
framework versions (scripts/python-env) against the real daemon and the fake provider: every
request the provider saw was limited (granted on the recipe's keys), the tokens settled are the
tokens the provider counted, streamed and not, and a 429 is retried once, by one layer."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple

import pytest

from conftest import REPO, Daemon, Provider, llmctl_bin, wait_until

README = REPO / "README.md"
VENVS = {"frameworks": REPO / ".venv-frameworks", "llamaindex": REPO / ".venv-llamaindex"}
RECIPE = re.compile(r"<!-- recipe: ([\w-]+)( exec)? -->\n```python\n(.*?)```", re.S)


class Recipe(NamedTuple):
    name: str
    code: str
    under_exec: bool
    venv: Path
    keys: List[str]


# What each recipe calls: the keys its requests are limited on.
KEYS = {
    "openai": ["openai/gpt-4o-mini"],
    "anthropic": ["anthropic/claude-sonnet-4-5"],
    "langchain-openai": ["openai/gpt-4o-mini"],
    "langchain-anthropic": ["anthropic/claude-sonnet-4-5"],
    "litellm": ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"],
    "pydantic-ai": ["openai/gpt-4o-mini"],
    "openai-agents": ["openai/gpt-4o-mini"],
    "llamaindex": ["openai/gpt-4o-mini"],
    "bedrock": ["bedrock/anthropic.claude-sonnet-4-5"],
    "anthropic-bedrock": ["bedrock/anthropic.claude-sonnet-4-5"],
}


def recipes() -> Dict[str, Recipe]:
    found = {}
    for name, under_exec, code in RECIPE.findall(README.read_text()):
        venv = VENVS["llamaindex" if name == "llamaindex" else "frameworks"]
        found[name] = Recipe(name, code, bool(under_exec), venv, KEYS[name])
    return found


def test_every_framework_has_its_recipe() -> None:
    assert sorted(recipes()) == sorted(KEYS)


def environment(daemon: Daemon, provider: Provider) -> Dict[str, str]:
    """A user's environment: the provider where the SDKs read their base URLs, the daemon's
    socket, and none of the aliases a framework would read before them."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not re.match(r"(OPENAI|ANTHROPIC|GEMINI|GOOGLE_GEMINI|LITELLM|LLMCTL|AWS)_", k)
        and k != "VIRTUAL_ENV"
    }
    env.update(
        {
            "OPENAI_BASE_URL": provider.url + "/v1",
            "OPENAI_API_KEY": "test",
            "ANTHROPIC_BASE_URL": provider.url,
            "ANTHROPIC_API_KEY": "test",
            "LLMCTL_SOCKET": daemon.socket,
            "LLMCTL_AUTOSTART": "0",
            # Offline: no price list fetched when LiteLLM is imported, no traces sent.
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OPENAI_AGENTS_DISABLE_TRACING": "1",
            # boto3: Bedrock's endpoint (the fake provider), and credentials to sign with.
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": provider.url,
            "ANTHROPIC_BEDROCK_BASE_URL": provider.url,
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
            "AWS_SECRET_ACCESS_KEY": "secret",
            "AWS_EC2_METADATA_DISABLED": "true",
        }
    )
    return env


def run(recipe: Recipe, daemon: Daemon, provider: Provider, tmp: Path) -> subprocess.CompletedProcess:
    app = tmp / "app.py"
    app.write_text(recipe.code)
    env = environment(daemon, provider)
    python = str(recipe.venv / "bin" / "python")
    if recipe.name == "llamaindex":
        # It reads OPENAI_API_BASE, not OPENAI_BASE_URL.
        env["OPENAI_API_BASE"] = env["OPENAI_BASE_URL"]
    if recipe.under_exec:
        config = tmp / "proxy.toml"
        config.write_text(
            '[proxy]\nlisten = "127.0.0.1:1"\n'
            f'[proxy.upstreams.openai]\nurl = "{provider.url}"\n'
            f'[proxy.upstreams.anthropic]\nurl = "{provider.url}"\n'
        )
        # The user's environment names no base URL: exec gives the built-in upstreams (here
        # the provider), as on a machine that calls the real APIs.
        env.pop("ANTHROPIC_BASE_URL")
        env.pop("OPENAI_BASE_URL")
        cmd = [
            llmctl_bin(),
            "exec",
            "--config",
            str(config),
            "--socket",
            daemon.socket,
            "--",
            python,
            str(app),
        ]
    else:
        cmd = [python, str(app)]
    return subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=180)


def settled(daemon: Daemon, recipe: Recipe, provider: Provider) -> Dict[str, Any]:
    """Waits until every lease on the recipe's keys is settled; what the daemon and the
    provider counted."""

    def figures() -> Dict[str, Any]:
        keys = daemon.status()
        mine = [keys[k] for k in recipe.keys if k in keys]
        stats = provider.stats()
        return {
            "missing": [k for k in recipe.keys if k not in keys],
            "others": sorted(set(keys) - set(recipe.keys)),
            "outstanding": sum(k.tokens_outstanding + k.in_flight for k in mine),
            "granted": sum(k.granted_total for k in mine),
            "used": sum(k.tokens_used for k in mine),
            "at_estimate": sum(k.settled_at_estimate_total for k in mine),
            "rate_limited": sum(k.rate_limited_total for k in mine),
            "provider_requests": int(stats["requests"]),
            "provider_tokens": int(stats["input_tokens"]) + int(stats["output_tokens"]),
            "provider_429s": int(stats["responses"].get("429", 0)),
        }

    last: Dict[str, Any] = {}

    def done() -> bool:
        last.update(figures())
        return not last["missing"] and last["outstanding"] == 0 and last["used"] == last["provider_tokens"]

    try:
        wait_until(done, 15, "the recipe's leases settled at the provider's usage")
    except AssertionError as e:
        raise AssertionError(f"{e}: {last}") from None
    return last


# The provider requests of each recipe's clean run, for its run with a 429.
CALLS: Dict[str, int] = {}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_a_recipe_is_limited_and_settled_at_the_providers_usage(
    name: str, daemon: Daemon, start_provider: Callable[..., Provider], tmp_path: Path
) -> None:
    recipe = recipes()[name]
    provider = start_provider()
    r = run(recipe, daemon, provider, tmp_path)
    assert r.returncode == 0, f"{name}:\n{r.stdout}\n{r.stderr}"
    assert "tok" in r.stdout, r.stdout
    assert "llmctl:" not in r.stderr, r.stderr
    got = settled(daemon, recipe, provider)
    print(f"{name}: {got}")
    assert got["granted"] == got["provider_requests"] > 0, f"a request went around the limiter: {got}"
    assert got["at_estimate"] == 0, f"an answer was settled without its usage: {got}"
    assert got["provider_429s"] == 0, got
    assert not got["others"], f"calls limited on keys the recipe does not name: {got}"
    CALLS[name] = got["provider_requests"]


@pytest.mark.parametrize("name", sorted(KEYS))
def test_a_429_in_a_recipe_is_retried_once_by_one_layer(
    name: str, start_daemon: Callable[..., Daemon], start_provider: Callable[..., Provider], tmp_path: Path
) -> None:
    recipe = recipes()[name]
    calls = CALLS.get(name)
    if calls is None:  # run alone: its clean run first
        clean, first = start_provider(), start_daemon()
        assert run(recipe, first, clean, tmp_path).returncode == 0
        calls = settled(first, recipe, clean)["provider_requests"]
    # The same recipe, the provider refusing its first request with a 429.
    provider = start_provider("--fault", "rate_limit,retry_after=1,count=1")
    daemon = start_daemon()
    r = run(recipe, daemon, provider, tmp_path)
    assert r.returncode == 0, f"{name}:\n{r.stdout}\n{r.stderr}"
    got = settled(daemon, recipe, provider)
    assert got["provider_429s"] == 1, got
    assert got["provider_requests"] == calls + 1, f"retried once, by one layer: {got} after {calls} calls"
    assert got["granted"] == got["provider_requests"], f"the retry was limited too: {got}"
    assert got["rate_limited"] == 1, got


SYNC_ONLY = """
import httpx, sys
from langchain_openai import ChatOpenAI
from llmctl.httpx import AsyncLimitedTransport, LimitedTransport
both = sys.argv[1] == "both"
llm = ChatOpenAI(model="gpt-4o-mini", max_retries=0,
                 http_client=httpx.Client(transport=LimitedTransport(key="openai/{model}")),
                 **({"http_async_client": httpx.AsyncClient(transport=AsyncLimitedTransport(key="openai/{model}"))} if both else {}))
llm.invoke("Say hi.")
llm.invoke("Say hi.")
"""


@pytest.mark.parametrize("clients", ["sync-only", "both"])
def test_a_sync_transport_alone_in_langchain_warns_once_of_the_async_path(
    clients: str, daemon: Daemon, start_provider: Callable[..., Provider], tmp_path: Path
) -> None:
    provider = start_provider()
    app = tmp_path / "app.py"
    app.write_text(SYNC_ONLY)
    r = subprocess.run(
        [str(VENVS["frameworks"] / "bin" / "python"), str(app), clients],
        env=environment(daemon, provider),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    warnings = r.stderr.count("no http_async_client")
    assert warnings == (1 if clients == "sync-only" else 0), r.stderr


PLAIN_LANGCHAIN = """
from langchain_openai import ChatOpenAI
llm = ChatOpenAI(model="gpt-4o-mini", max_retries=0)
print(llm.invoke("Say hi.").content)
for chunk in llm.stream("Say hi."):
    print(chunk.content, end="")
"""


def run_with_only_the_alias(
    daemon: Daemon, builtin: Provider, destination: Provider, tmp_path: Path, name: str, code: str
) -> Dict[str, Any]:
    """Runs `code` under `llmctl exec` (its built-in OpenAI upstream `builtin`) with only
    OPENAI_API_BASE exported, naming `destination`; what settled there, once the built-in upstream
    is checked to have had nothing."""
    config = tmp_path / "proxy.toml"
    config.write_text(f'[proxy]\nlisten = "127.0.0.1:1"\n[proxy.upstreams.openai]\nurl = "{builtin.url}"\n')
    app = tmp_path / "app.py"
    app.write_text(code)
    env = environment(daemon, builtin)
    env.pop("OPENAI_BASE_URL")
    env["OPENAI_API_BASE"] = destination.url + "/v1"
    python = str(VENVS["frameworks"] / "bin" / "python")
    r = subprocess.run(
        [llmctl_bin(), "exec", "--config", str(config), "--socket", daemon.socket, "--", python, str(app)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert builtin.stats()["requests"] == 0, "nothing went to the built-in upstream"
    key = f"{destination.url.split('://', 1)[1]}/gpt-4o-mini"
    return settled(daemon, Recipe(name, code, True, VENVS["frameworks"], [key]), destination)


def test_langchain_under_exec_with_its_own_base_url_exported_is_still_limited_and_goes_there(
    daemon: Daemon, start_provider: Callable[..., Provider], tmp_path: Path
) -> None:
    """OPENAI_API_BASE (read by LangChain before OPENAI_BASE_URL) names the user's server: exec
    keeps it as the destination, through the proxy, and the built-in upstream gets nothing."""
    builtin, mine = start_provider(), start_provider()
    got = run_with_only_the_alias(daemon, builtin, mine, tmp_path, "plain-langchain", PLAIN_LANGCHAIN)
    assert got["granted"] == got["provider_requests"] == 2, got
    assert got["at_estimate"] == 0, got


LITELLM_OPENAI = """
import litellm
r = litellm.completion(model="openai/gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], max_tokens=8)
print(r.choices[0].message.content)
"""


def test_litellm_under_exec_with_only_the_alias_exported_goes_where_the_alias_says(
    daemon: Daemon, start_provider: Callable[..., Provider], tmp_path: Path
) -> None:
    """OPENAI_API_BASE set alone (aider's documented setup) names a gateway; LiteLLM reads
    OPENAI_BASE_URL first. Every variable of the family exec sets leads to the gateway
    (conformance/exec_families.json): the request and its key reach it, none the built-in
    upstream."""
    builtin, gateway = start_provider(), start_provider()
    got = run_with_only_the_alias(daemon, builtin, gateway, tmp_path, "litellm-alias", LITELLM_OPENAI)
    assert got["granted"] == got["provider_requests"] == 1, got
