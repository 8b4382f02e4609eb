#!/usr/bin/env bash
# :checkhealth loom on a Neovim older than 0.9 (Debian 12's 0.7.2) must say
# that Neovim 0.9 or newer is required, not fail with a Lua error.
#
#   editors/neovim/test/oldnvim.sh [nvim]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
plugin=$(cd "$here/.." && pwd)
nvim=${1:-nvim}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

HOME=$(dirname "$out") timeout 60 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c 'checkhealth loom' \
	-c "call writefile(getline(1, '\$'), '$out')" \
	-c 'qa!' >/dev/null 2>&1 || true

if ! grep -q 'Neovim 0.9 or newer is required' "$out" || grep -qiE 'E5108|lua error|stack traceback' "$out"; then
	echo "FAIL: :checkhealth loom on $("$nvim" --version | head -1):" >&2
	cat "$out" >&2
	exit 1
fi
echo "ok   :checkhealth loom on $("$nvim" --version | head -1) says Neovim 0.9 or newer is required"
