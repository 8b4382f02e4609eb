#!/usr/bin/env bash
# Installs the real MCP servers the Go tests run (pinned by
# package-lock.json) into tools/mcp/testdata/servers/node_modules.
# Idempotent; fails loudly when Node, npm or the install is missing, so
# that CI never silently skips the MCP tests.
set -euo pipefail
cd "$(dirname "$0")/servers"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "tools/mcp/testdata/install.sh: node and npm are required (Node 20)" >&2
	exit 1
fi
stamp=node_modules/.loom-installed
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -x node_modules/.bin/mcp-server-everything ] && [ -x node_modules/.bin/mcp-server-filesystem ] &&
	[ -f node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js ] &&
	[ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
for bin in mcp-server-everything mcp-server-filesystem; do
	if [ ! -x "node_modules/.bin/$bin" ]; then
		echo "tools/mcp/testdata/install.sh: npm ci did not install $bin" >&2
		exit 1
	fi
done
echo "$want" >"$stamp"
