#!/usr/bin/env bash
# The ACP conformance tests: `loom-lsp acp`, built from this tree, driven
# over real stdio by the official ACP TypeScript SDK on Node 20, with a
# scripted OpenAI-compatible model server on loopback:
#   - ACP v1 with @agentclientprotocol/sdk 1.9.0 (package-lock.json here);
#   - ACP v2 (Preview) with @agentclientprotocol/sdk 2.4.0's
#     experimental/v2 client (v2/package-lock.json), which validates every
#     message against the v2 schema.
# Called by .ci/run; needs go, node >= 20 and npm (the registry), nothing else.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$major" -lt 20 ]; then
	echo "acp conformance: Node 20 or later is required (found: $(node --version 2>/dev/null || echo none))" >&2
	exit 1
fi
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
(cd "$root" && go build -o "$bin/loom-lsp" ./cmd/loom-lsp)
cd "$here"
npm ci --no-audit --no-fund
LOOM_BIN="$bin/loom-lsp" npm test
cd "$here/v2"
npm ci --no-audit --no-fund
LOOM_BIN="$bin/loom-lsp" npm test
