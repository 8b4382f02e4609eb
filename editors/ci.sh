#!/usr/bin/env bash
# CI for the editor clients: the Neovim plugin's headless end-to-end test
# (against a loom-lsp built from this checkout) and the VS Code extension's
# unit tests and end-to-end suite in code-server. Exits non-zero on any
# failure.
#
#   editors/ci.sh
#
# Environment:
#   NVIM            an nvim >= 0.9 to use (else one is found or provisioned
#                   by editors/neovim/test/nvim.sh)
#   LOOM_SKIP_NVIM  =1 skips the Neovim test (it is otherwise required)
#   LOOM_LSP        a prebuilt loom-lsp for the Neovim and VS Code tests
#   LOOM_SKIP_VSCODE_E2E =1 skips the VS Code e2e suite (code-server +
#                   Chromium); its unit tests and .vsix still run
set -euo pipefail

editors=$(cd "$(dirname "$0")" && pwd)
failed=()
start=$SECONDS

step() { printf '\n== %s\n' "$*"; }

# --- Neovim ---------------------------------------------------------------
if [[ ${LOOM_SKIP_NVIM:-} == 1 ]]; then
	step "neovim: skipped (LOOM_SKIP_NVIM=1)"
else
	step "neovim: find or provision nvim >= 0.9"
	nvim=${NVIM:-}
	if [[ -z $nvim ]]; then
		# Debian's own package first, when it is new enough (Debian 12's
		# 0.7.2 is not; nvim.sh then fetches Debian 13's into a cache).
		if ! command -v nvim >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
			cand=$(apt-cache policy neovim 2>/dev/null | awk '/Candidate:/ {print $2}')
			if [[ -n $cand && $cand != "(none)" ]] && dpkg --compare-versions "$cand" ge 0.9; then
				DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null || true
			fi
		fi
		nvim=$("$editors/neovim/test/nvim.sh") || nvim=""
	fi
	if [[ -z $nvim ]]; then
		echo "neovim: no nvim >= 0.9 available"
		failed+=(neovim)
	else
		"$nvim" --version | head -1
		step "neovim: headless e2e (editors/neovim/test/run.sh)"
		if ! NVIM=$nvim "$editors/neovim/test/run.sh"; then
			failed+=(neovim)
		fi
	fi
fi

# --- VS Code --------------------------------------------------------------
# Unit tests on Node 20 and 24, the .vsix, and the end-to-end suite inside
# real VS Code (code-server + Chromium); editors/vscode/e2e/ci.sh installs
# what it needs. LOOM_SKIP_VSCODE_E2E=1 stops after the unit tests and the
# .vsix.
step "vscode: editors/vscode/e2e/ci.sh"
if ! LOOM_LSP=${LOOM_LSP:-} "$editors/vscode/e2e/ci.sh"; then
	failed+=(vscode)
fi

step "editors/ci.sh took $((SECONDS - start)) s"
if ((${#failed[@]})); then
	echo "FAILED: ${failed[*]}"
	exit 1
fi
echo "editors: all passed"
