#!/usr/bin/env bash
# Generic LSP clients, with no loom code in them, against loom-lsp built
# from this checkout and the scripted model: Emacs's eglot (Debian 12's
# elpa-eglot 1.9, on emacs-nox), lsp-mode (elpa-lsp-mode 8.0) and bare Neovim (vim.lsp.start, no plugin).
# Each shows the answer, approves a command in its own question, is asked
# to review a change (and sees it), keeps one and discards another, which
# leaves nothing. Called by .ci/run; installs what is missing with apt-get
# (idempotent). Exits non-zero on any failure.
#
#   editors/generic/ci.sh
#
# Environment:
#   LOOM_LSP   a prebuilt loom-lsp (default: built from this checkout)
#   NVIM       an nvim >= 0.10 (default: editors/neovim/test/nvim.sh finds one)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
start=$SECONDS
failed=()

missing=()
command -v emacs >/dev/null 2>&1 || missing+=(emacs-nox)
[[ -n $(ls -d /usr/share/emacs/site-lisp/elpa*/eglot* 2>/dev/null) ]] || missing+=(elpa-eglot)
[[ -n $(ls -d /usr/share/emacs/site-lisp/elpa*/lsp-mode* 2>/dev/null) ]] || missing+=(elpa-lsp-mode)
if ((${#missing[@]})); then
	if command -v apt-get >/dev/null 2>&1; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
	else
		echo "generic clients: ${missing[*]} missing and no apt-get" >&2
		exit 1
	fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${LOOM_LSP:-}
if [[ -z $bin ]]; then
	bin=$tmp/loom-lsp
	(cd "$repo" && go build -o "$bin" ./cmd/loom-lsp)
fi

echo "== generic clients: eglot ($(emacs --version | head -1))"
if ! (source "$here/setup.sh" "$tmp/eglot" && cd "$proj" &&
	LOOM_TEST_BIN=$bin LOOM_TEST_PROJ=$proj timeout 120 emacs -Q --batch -l "$here/eglot-test.el" 2>"$tmp/eglot.err"); then
	tail -20 "$tmp/eglot.err"
	failed+=(eglot)
fi

echo "== generic clients: lsp-mode"
if ! (source "$here/setup.sh" "$tmp/lspmode" && cd "$proj" &&
	LOOM_TEST_BIN=$bin LOOM_TEST_PROJ=$proj timeout 120 emacs -Q --batch -l "$here/lspmode-test.el" 2>"$tmp/lspmode.err"); then
	tail -20 "$tmp/lspmode.err"
	failed+=(lsp-mode)
fi

nvim=${NVIM:-$("$repo/editors/neovim/test/nvim.sh" 2>/dev/null || true)}
if [[ -z $nvim ]] || ! "$nvim" --headless -u NONE -c 'if has("nvim-0.10") | qa! | else | cq | endif' >/dev/null 2>&1; then
	echo "generic clients: no nvim >= 0.10 for the bare Neovim test" >&2
	failed+=(neovim)
else
	echo "== generic clients: bare Neovim ($("$nvim" --version | head -1))"
	if ! (source "$here/setup.sh" "$tmp/nvim" && cd "$proj" &&
		LOOM_TEST_BIN=$bin LOOM_TEST_PROJ=$proj timeout 120 "$nvim" --headless -u NONE -i NONE -n -l "$here/neovim-test.lua"); then
		failed+=(neovim)
	fi
fi

echo "== generic clients took $((SECONDS - start)) s"
if ((${#failed[@]})); then
	echo "generic clients FAILED: ${failed[*]}"
	exit 1
fi
echo "generic clients: all passed"
