"""httpx transports that ask llmctl before every provider request and report after it, so the
official SDKs are limited without changing the code that calls them:

    import httpx2, openai
    from llmctl.httpx import LimitedTransport

    client = openai.OpenAI(
        http_client=httpx2.Client(transport=LimitedTransport(key="openai/gpt-5.5")),
        max_retries=0,  # llmctl paces the calls; SDK retries would multiply them
    )

They work with ``httpx`` and with ``httpx2`` clients (the openai and anthropic SDKs use
``httpx2`` from their 3.x / 2.x releases; earlier ones use ``httpx``): each request is sent with
the library it came from. POST requests with a JSON body are limited; everything else passes
straight through.

For each limited request the transport estimates the input tokens from the body (characters / 4
over the text, 3 per message, ``image_tokens`` per image; see ``llmctl._estimate``) and the output
from ``max_tokens`` / ``max_completion_tokens`` / ``max_output_tokens`` (else
``default_output_tokens``), acquires a lease on ``key``, sends the request with the inner
transport, and reports the status, the rate-limit headers and the usage from the response. A
streamed answer (server-sent events) is watched as the caller reads it: the usage comes from the
final events (OpenAI's last chunk when ``stream_options={"include_usage": True}``, Anthropic's
``message_start`` / ``message_delta``), an error event inside the 200 is reported with its type
and whether output had already been delivered, and the report goes when the stream is exhausted
or closed.

By default the transport follows the daemon's advice itself, for answers that arrive whole (not
a streamed 200): a ``retry`` advice waits ``retry_after`` and sends again, as long as the lease's
retry profile allows (its attempts and deadline; without the daemon, at most 4 attempts); a
``give_up`` returns the provider's answer, so the SDK raises as usual. ``max_retries=N`` bounds
the resends to N; ``max_retries=0`` never resends. Each advice goes to ``on_advice(request,
advice)`` and onto the response as ``response.extensions["llmctl_advice"]`` (an SDK's
``APIStatusError.response`` carries it), with the key reported as
``response.extensions["llmctl_key"]``. Keep the SDK's own ``max_retries=0`` either way.

With ``route_group=`` instead of ``key=`` the daemon grants a member of that configured group
and the report goes to that member. The request is sent as the SDK made it unless a
``route(request, key)`` hook returns the request for the member (`reroute` copies one with
another origin, model or headers); with such a hook and ``max_retries`` the transport also
follows a ``fallback`` advice to the key it names.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

from ._estimate import Estimate
from ._httpx_aio import AsyncLimitedTransport
from ._httpx_sync import LimitedTransport
from ._transport import AdviceHook as AdviceHook
from ._transport import KeyArg as KeyArg
from ._transport import RouteHook as RouteHook
from ._transport import library

__all__ = ["LimitedTransport", "AsyncLimitedTransport", "Estimate", "reroute"]

# The transports are written in private modules (the synchronous one is generated from the
# asyncio one), but this is where they are documented and imported from.
LimitedTransport.__module__ = AsyncLimitedTransport.__module__ = __name__


def reroute(
    request: Any,
    *,
    origin: Optional[str] = None,
    model: Optional[str] = None,
    headers: Optional[Mapping[str, str]] = None,
) -> Any:
    """A copy of an httpx (or httpx2) request for another member of a route group, for a
    transport's ``route`` hook: ``origin`` (``"https://host[:port]"``) replaces the URL's scheme,
    host and port, keeping its path; ``model`` replaces the ``"model"`` of the JSON body;
    ``headers`` sets or replaces headers (the member's API key, say). Nothing else changes."""
    lib = library(request)
    url = request.url
    if origin is not None:
        o = lib.URL(origin)
        if not o.scheme or not o.host or o.path not in ("", "/") or o.query:
            raise ValueError(
                f"origin {origin!r} must be a scheme, host and port only, such as 'https://eu.example.com'"
            )
        url = url.copy_with(scheme=o.scheme, host=o.host, port=o.port)
    content = request.content
    if model is not None:
        try:
            body = json.loads(content)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise ValueError("model= needs a request whose body is a JSON object")
        body["model"] = model
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    kept = [
        (name, value)
        for name, value in request.headers.multi_items()
        if name.lower() not in ("host", "content-length")
    ]
    out = lib.Request(request.method, url, headers=kept, content=content, extensions=dict(request.extensions))
    for name, value in (headers or {}).items():
        out.headers[name] = value
    return out
