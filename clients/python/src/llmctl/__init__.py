"""llmctl: ask the host's llmctl daemon before each LLM API call, report what happened after.

    import llmctl

    client = llmctl.Client()
    with client.acquire("openai/gpt-5.5", input_tokens=1200, output_tokens=500) as lease:
        response = call_the_provider()
        advice = lease.report_response(response)

For the openai and anthropic SDKs, `llmctl.httpx.LimitedTransport` does this on every request.
Work that must happen once across processes: ``client.run_once(key, fn)`` (or `claim` and
`complete`).
"""

from ._aio import AsyncClient, AsyncLease, PendingLease
from ._claims import ClaimResult
from ._client import Client, Lease
from ._common import Advice, Outcome, default_socket
from ._errors import (
    ClaimHistoryLost,
    ClaimRefused,
    DaemonBusy,
    InvalidArgument,
    LeaseNotFound,
    LlmctlError,
    NeverFits,
    NotGranted,
    Pending,
    RunBudgetExceeded,
    Unavailable,
)
from ._outcome import parse_usage

__version__ = "0.1.0"

__all__ = [
    "Advice",
    "AsyncClient",
    "AsyncLease",
    "ClaimHistoryLost",
    "ClaimRefused",
    "ClaimResult",
    "Client",
    "DaemonBusy",
    "InvalidArgument",
    "Lease",
    "LeaseNotFound",
    "LlmctlError",
    "NeverFits",
    "NotGranted",
    "Outcome",
    "Pending",
    "PendingLease",
    "RunBudgetExceeded",
    "Unavailable",
    "default_socket",
    "parse_usage",
]
