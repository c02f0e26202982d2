"""The contract (proto/llmctl/v1/limiter.proto) passes the pinned buf's lint under proto/buf.yaml,
waives only the rules its v1 names break, documents every field, enum value and RPC, and names
the packages other languages generate it into. Needs buf from clients/node (npm ci), not the daemon."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from collections import Counter
from typing import List, Set, Tuple

import pytest
from google.protobuf import descriptor_pb2

from conftest import REPO

PROTO_DIR = REPO / "proto"
BUF_YAML = PROTO_DIR / "buf.yaml"
BUF = REPO / "clients" / "node" / "node_modules" / ".bin" / "buf"
CONTRACT = "llmctl/v1/limiter.proto"
TIMEOUT_S = 180

# Paths in SourceCodeInfo: the field numbers of the descriptor messages that hold each element.
FILE_MESSAGES = descriptor_pb2.FileDescriptorProto.MESSAGE_TYPE_FIELD_NUMBER
FILE_ENUMS = descriptor_pb2.FileDescriptorProto.ENUM_TYPE_FIELD_NUMBER
FILE_SERVICES = descriptor_pb2.FileDescriptorProto.SERVICE_FIELD_NUMBER
MESSAGE_FIELDS = descriptor_pb2.DescriptorProto.FIELD_FIELD_NUMBER
MESSAGE_NESTED = descriptor_pb2.DescriptorProto.NESTED_TYPE_FIELD_NUMBER
MESSAGE_ENUMS = descriptor_pb2.DescriptorProto.ENUM_TYPE_FIELD_NUMBER
ENUM_VALUES = descriptor_pb2.EnumDescriptorProto.VALUE_FIELD_NUMBER
SERVICE_METHODS = descriptor_pb2.ServiceDescriptorProto.METHOD_FIELD_NUMBER

# The names v1 had before it was linted, which a rule of STANDARD flags (by rule, and the text of
# the flagged span): they are the contract, so proto/buf.yaml waives these rules for the v1 file.
V1_NAMES: Counter[Tuple[str, str]] = Counter(
    [
        ("SERVICE_SUFFIX", "Limiter"),
        ("RPC_REQUEST_RESPONSE_UNIQUE", "rpc Status(StatusRequest) returns (StatusResponse);"),
        ("RPC_REQUEST_RESPONSE_UNIQUE", "rpc Watch(WatchRequest) returns (stream StatusResponse);"),
        ("RPC_RESPONSE_STANDARD_NAME", "StatusResponse"),
        ("RPC_RESPONSE_STANDARD_NAME", "SessionEvent"),
        # Advice
        ("ENUM_VALUE_PREFIX", "DONE"),
        ("ENUM_VALUE_PREFIX", "RETRY"),
        ("ENUM_VALUE_PREFIX", "GIVE_UP"),
        ("ENUM_VALUE_PREFIX", "FALLBACK"),
        # ClaimResponse.State
        ("ENUM_VALUE_PREFIX", "CLAIMED"),
        ("ENUM_VALUE_PREFIX", "PENDING"),
        ("ENUM_VALUE_PREFIX", "DONE"),
    ]
)


def buf(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Runs the pinned buf in proto/ (where buf.yaml is); fails, never skips, when it is missing."""
    if not (BUF.is_file() and os.access(BUF, os.X_OK)):
        pytest.fail(
            f"the pinned buf is missing ({BUF}); run `npm ci` in clients/node to install it",
            pytrace=False,
        )
    try:
        return subprocess.run(
            [str(BUF), *args], cwd=PROTO_DIR, capture_output=True, timeout=TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"buf {' '.join(args)} did not finish within {TIMEOUT_S} s", pytrace=False)


def shown(r: subprocess.CompletedProcess[bytes]) -> str:
    return (r.stdout + r.stderr).decode(errors="replace")


@functools.lru_cache(maxsize=1)
def contract() -> descriptor_pb2.FileDescriptorProto:
    """limiter.proto as buf builds it, with its comments (source info is kept unless
    --exclude-source-info is given)."""
    r = buf("build", ".", "--as-file-descriptor-set", "--exclude-imports", "-o", "-#format=binpb")
    assert r.returncode == 0, f"buf build failed:\n{shown(r)}"
    files = {f.name: f for f in descriptor_pb2.FileDescriptorSet.FromString(r.stdout).file}
    assert CONTRACT in files, f"buf build made {sorted(files)}, not {CONTRACT}"
    assert files[CONTRACT].source_code_info.location, "buf build dropped the source info"
    return files[CONTRACT]


def waived_rules() -> Set[str]:
    """The rules proto/buf.yaml's lint section lists under `except` or `ignore_only`."""
    rules: Set[str] = set()
    section, in_lint = "", False
    for raw in BUF_YAML.read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            in_lint = line.startswith("lint:")
            continue
        if not in_lint:
            continue
        if indent == 2:
            section = line.strip().split(":", 1)[0]
        elif section == "except":
            m = re.fullmatch(r"\s*-\s*([A-Z][A-Z0-9_]*)", line)
            if m:
                rules.add(m.group(1))
        elif section == "ignore_only" and indent == 4:
            m = re.fullmatch(r"\s*([A-Z][A-Z0-9_]*):", line)
            if m:
                rules.add(m.group(1))
    return rules


def test_buf_lint_passes() -> None:
    r = buf("lint")
    assert r.returncode == 0, (
        "buf lint proto/ fails: fix the proto (comments, options), or, only for a name v1 cannot "
        f"change, waive the rule in proto/buf.yaml with the reason:\n{shown(r)}"
    )


def test_buf_yaml_waives_only_what_v1_names_break() -> None:
    """Under plain STANDARD, exactly the v1 names in V1_NAMES break a rule, and buf.yaml waives
    exactly their rules: a new name in the v1 file that breaks a waived rule fails here, and a
    waiver nothing needs any more is removed so the rule guards the file again."""
    plain = json.dumps({"version": "v2", "lint": {"use": ["STANDARD"]}})
    r = buf("lint", ".", "--config", plain, "--error-format", "json")
    assert r.returncode in (0, 100), f"buf lint with plain STANDARD failed to run:\n{shown(r)}"
    lines = (PROTO_DIR / CONTRACT).read_text().splitlines()
    broken: Counter[Tuple[str, str]] = Counter()
    for out in r.stdout.decode().splitlines():
        if not out.strip():
            continue
        e = json.loads(out)
        assert e["path"] == CONTRACT, f"unexpected lint finding outside the v1 file: {out}"
        span = lines[e["start_line"] - 1 : e["end_line"]]
        span[-1] = span[-1][: e["end_column"] - 1]
        span[0] = span[0][e["start_column"] - 1 :]
        broken[(e["type"], " ".join(" ".join(span).split()))] += 1
    assert broken == V1_NAMES, (
        "the v1 names that break STANDARD changed: new names must follow it; "
        f"new findings {sorted((broken - V1_NAMES).elements())}, "
        f"gone {sorted((V1_NAMES - broken).elements())}"
    )
    waived = waived_rules()
    needed = {rule for rule, _ in V1_NAMES}
    assert waived <= needed, f"proto/buf.yaml waives {sorted(waived - needed)}, which no v1 name needs"
    assert needed <= waived, f"proto/buf.yaml does not waive {sorted(needed - waived)}"


def test_every_field_enum_value_and_rpc_is_commented() -> None:
    """Every field and enum value (nested ones too) and every RPC has a leading `//` comment:
    what the code does with it (units, defaults, what 0 or empty means, bounds) is told there,
    for clients in every language."""
    f = contract()
    comments = {tuple(loc.path): loc.leading_comments.strip() for loc in f.source_code_info.location}
    missing: List[str] = []

    def check(path: List[int], name: str) -> None:
        if not comments.get(tuple(path)):
            missing.append(name)

    def enum(e: descriptor_pb2.EnumDescriptorProto, path: List[int], scope: str) -> None:
        for i, v in enumerate(e.value):
            check([*path, ENUM_VALUES, i], f"{scope}{e.name}.{v.name}")

    def message(m: descriptor_pb2.DescriptorProto, path: List[int], scope: str) -> None:
        if m.options.map_entry:
            return  # map<K, V>: its entry message is made by the compiler, the field is commented
        name = f"{scope}{m.name}"
        for i, field in enumerate(m.field):
            check([*path, MESSAGE_FIELDS, i], f"{name}.{field.name}")
        for i, nested in enumerate(m.nested_type):
            message(nested, [*path, MESSAGE_NESTED, i], f"{name}.")
        for i, e in enumerate(m.enum_type):
            enum(e, [*path, MESSAGE_ENUMS, i], f"{name}.")

    for i, m in enumerate(f.message_type):
        message(m, [FILE_MESSAGES, i], "")
    for i, e in enumerate(f.enum_type):
        enum(e, [FILE_ENUMS, i], "")
    for si, s in enumerate(f.service):
        for mi, method in enumerate(s.method):
            check([FILE_SERVICES, si, SERVICE_METHODS, mi], f"rpc {s.name}.{method.name}")
    counted = sum(len(m.field) for m in f.message_type) + sum(len(e.value) for e in f.enum_type)
    assert counted > 100, f"only {counted} fields and enum values found; is this the contract?"
    assert not missing, (
        f"{len(missing)} without a comment in {CONTRACT} (a `//` line above each): " + ", ".join(missing)
    )


def test_language_options_are_set() -> None:
    """Code generated for Go, Java and C# lands in stable packages, not ones derived from paths."""
    o = contract().options
    assert o.go_package == "github.com/llmctl/llmctl/gen/go/llmctl/v1;llmctlv1"
    assert o.java_package == "dev.llmctl.v1"
    assert o.java_multiple_files
    assert o.java_outer_classname == "LimiterProto"
    assert o.csharp_namespace == "Llmctl.V1"
