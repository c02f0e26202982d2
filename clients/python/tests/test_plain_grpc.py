"""The daemon as any gRPC stack sees it: a plain ``grpcio`` channel with its default options (no
llmctl package code, no authority override) calls every RPC, and health and reflection answer.

grpc-core sends the socket's path as the HTTP/2 ``:authority``; the daemon must take it.
"""

from __future__ import annotations

from typing import Iterator

import grpc
import pytest

from conftest import Daemon, wait_until
from llmctl.v1 import limiter_pb2 as pb
from llmctl.v1 import limiter_pb2_grpc as pb_grpc


@pytest.fixture
def channel(daemon: Daemon) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel("unix:" + daemon.socket) as ch:
        yield ch


def test_a_default_channel_calls_every_rpc(daemon: Daemon, channel: grpc.Channel) -> None:
    stub = pb_grpc.LimiterStub(channel)
    stub.Ping(pb.PingRequest(), timeout=10)
    lease = stub.Acquire(pb.AcquireRequest(key="plain/k", requests=1, input_tokens=10), timeout=10)
    assert lease.granted and lease.lease_id
    advice = stub.Report(
        pb.ReportRequest(lease_id=lease.lease_id, status_code=200, input_tokens=9, usage_known=True),
        timeout=10,
    )
    assert advice.advice == pb.DONE
    until = stub.Cooldown(pb.CooldownRequest(key="plain/c", duration_ms=60_000, reason="t"), timeout=10)
    assert until.until_unix_ms > 0
    refused = stub.Acquire(pb.AcquireRequest(key="plain/c", requests=1), timeout=10)
    assert not refused.granted and refused.reason_code == pb.REFUSAL_REASON_COOLDOWN
    st = stub.Status(pb.StatusRequest(), timeout=10)
    assert {"plain/k", "plain/c"} <= {k.key for k in st.keys}
    watch = stub.Watch(pb.WatchRequest(interval_ms=100), timeout=10)
    assert next(watch).keys
    watch.cancel()
    claim = stub.Claim(pb.ClaimRequest(key="plain-job", ttl_ms=60_000), timeout=10)
    assert claim.state == pb.ClaimResponse.CLAIMED
    stub.Complete(pb.CompleteRequest(key="plain-job", result=b"42"), timeout=10)
    done = stub.Claim(pb.ClaimRequest(key="plain-job", ttl_ms=60_000), timeout=10)
    assert done.state == pb.ClaimResponse.DONE and done.result == b"42"
    stub.SetRunBudget(pb.SetRunBudgetRequest(run_id="plain-run", max_calls=5), timeout=10)
    reset = stub.Reset(pb.ResetRequest(key="plain/c"), timeout=10)
    assert reset.cooldown_ended
    before = daemon.sessions()
    session = stub.Session(pb.SessionRequest(client_id="plain-client"))
    wait_until(lambda: daemon.sessions() == before + 1, 10, "the session to open")
    session.cancel()
    wait_until(lambda: daemon.sessions() == before, 10, "the session to end")


def _health(channel: grpc.Channel, service: str) -> bytes:
    check = channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=lambda s: b"\x0a" + bytes([len(s)]) + s.encode() if s else b"",
        response_deserializer=lambda b: b,
    )
    answer: bytes = check(service, timeout=10)
    return answer


def test_health_and_reflection_answer_on_a_default_channel(channel: grpc.Channel) -> None:
    # HealthCheckResponse{status: SERVING (1)}.
    assert _health(channel, "") == b"\x08\x01"
    assert _health(channel, "llmctl.v1.Limiter") == b"\x08\x01"
    reflect = channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )
    # ServerReflectionRequest{list_services: ""} (field 7).
    answers = reflect(iter([b"\x3a\x00"]), timeout=10)
    assert b"llmctl.v1.Limiter" in next(answers)
