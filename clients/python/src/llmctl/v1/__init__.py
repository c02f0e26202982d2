"""Generated gRPC stubs of the llmctl.v1 contract (proto/llmctl/v1/limiter.proto).

Regenerate them with scripts/gen-python-stubs; a test fails when they drift from the proto."""
