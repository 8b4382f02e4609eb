#!/usr/bin/env bash
# acpx (npm "acpx", pinned in package-lock.json), a headless ACP client
# we did not write, drives `loom-lsp acp` built from this checkout, with
# the generic clients' scripted model and user config (tools.bash = "ask",
# tools.edits = "review"; editors/generic/setup.sh):
#   - a prompt and its answer (acpx exec);
#   - a command asked through session/request_permission and allowed;
#   - a reviewed edit allowed (written and committed) and one refused
#     (nothing written, no commit);
#   - slash commands (/checkpoints; /keep, which commits the command's
#     file);
#   - the session loaded in a new loom-lsp process (acpx resumes its
#     named sessions with session/resume when the agent offers it, else
#     session/load): the conversation and its checkpoints come back from
#     the journal;
#   - a rewind over ACP (rewind.mjs): acpx's own ACP client prompts an
#     edit of list.txt, the user edits the file's last line, then the
#     draft's session/rewind (to the prompt: refused) and
#     session/edit_prompt go out raw on acpx's connection (acpx has no
#     command for them): the agent's change taken back, the user's kept.
#     The transcript is printed (docs/acp.md shows one).
# Called by .ci/run; needs go, node >= 20 and npm (the registry). Exits
# non-zero on any failure.
#
#   editors/acpx/ci.sh
#
# Environment:
#   LOOM_LSP   a prebuilt loom-lsp (default: built from this checkout)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
start=$SECONDS
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [[ $major -lt 20 ]]; then
	echo "acpx: Node 20 or later is required (found: $(node --version 2>/dev/null || echo none))" >&2
	exit 1
fi
# Idempotent: installed once per lock file. npm install, not npm ci: npm
# 11's ci refuses this lock, whose optional per-platform packages of
# @openclaw/fs-safe are not all published (install takes the lock as is).
# acpx asks for Node 22.13 in its package.json; what this test uses of it
# runs on Node 20 (npm only warns).
if ! cmp -s "$here/package-lock.json" "$here/node_modules/.package-lock.json.ci" 2>/dev/null; then
	log=$(mktemp)
	if ! (cd "$here" && npm install --no-audit --no-fund --no-save >"$log" 2>&1); then
		cat "$log" >&2
		exit 1
	fi
	rm -f "$log"
	cp "$here/package-lock.json" "$here/node_modules/.package-lock.json.ci"
fi
acpx_bin=$here/node_modules/.bin/acpx

tmp=$(mktemp -d)
bin=${LOOM_LSP:-}
if [[ -z $bin ]]; then
	bin=$tmp/loom-lsp
	(cd "$repo" && go build -o "$bin" ./cmd/loom-lsp)
fi
# shellcheck source=../generic/setup.sh
source "$repo/editors/generic/setup.sh" "$tmp/run"
cd "$proj"

acpx() { timeout 120 "$acpx_bin" --agent "$bin acp" --cwd "$proj" --ttl 60 "$@"; }
sessions=()
cleanup() {
	# Each named session's queue owner (and its loom-lsp) stops on close.
	for s in "${sessions[@]}"; do acpx sessions close "$s" >/dev/null 2>&1 || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

failed=0
ok() { echo "ok   $1"; }
bad() {
	echo "FAIL $1"
	[[ -f ${2:-} ]] && sed 's/^/     | /' "$2" | tail -40
	failed=$((failed + 1))
}
# has FILE TEXT...: the output holds every text.
has() {
	local f=$1
	shift
	for t in "$@"; do grep -qF -- "$t" "$f" || return 1; done
}
out=$tmp/out
run() { # run NAME ACPX-ARGS...: acpx's stdout and stderr in $out/NAME
	local name=$1
	shift
	mkdir -p "$out"
	acpx "$@" >"$out/$name" 2>&1 || echo "(acpx exited $?)" >>"$out/$name"
}

echo "== acpx $("$acpx_bin" --version) against loom-lsp acp"

run exec exec "greet"
if has "$out/exec" "Hello from loom." "[done] end_turn"; then ok "a prompt answered (exec)"; else bad "a prompt answered (exec)" "$out/exec"; fi

id=$(acpx sessions new --name one 2>/dev/null | head -1)
sessions+=(one)
if [[ $id == loom-* ]]; then ok "session/new: $id"; else bad "session/new gave no loom session id: $id"; fi

run run --approve-all prompt -s one "run"
if has "$out/run" "session/request_permission" "The command ran." && [[ -f ran.txt ]]; then
	ok "a command asked through session/request_permission, allowed and run"
else
	bad "a command asked through session/request_permission, allowed and run" "$out/run"
fi
if has "$out/run" "/keep ran.txt" && ! has "$out/run" "loom.commit"; then
	ok "the command's change says how to keep it in this client (/keep)"
else
	bad "the command's change says how to keep it in this client (/keep)" "$out/run"
fi

head0=$(git rev-parse HEAD)
run shout --approve-all prompt -s one "shout"
if has "$out/shout" "session/request_permission" "Shouted." && [[ $(cat hello.txt) == $'HELLO\nWORLD' ]] &&
	[[ $(git rev-parse HEAD) != "$head0" ]] && git show --name-only --format= HEAD | grep -qx hello.txt; then
	ok "a reviewed edit allowed: written and committed"
else
	bad "a reviewed edit allowed: written and committed ($(git log --oneline | head -3 | tr '\n' ' '))" "$out/shout"
fi

head1=$(git rev-parse HEAD)
run whisper --approve-reads --non-interactive-permissions deny prompt -s one "whisper"
if has "$out/whisper" "session/request_permission" && [[ $(cat hello.txt) == $'HELLO\nWORLD' ]] && [[ $(git rev-parse HEAD) == "$head1" ]]; then
	ok "a reviewed edit refused: nothing written, no commit"
else
	bad "a reviewed edit refused: nothing written, no commit" "$out/whisper"
fi

run checkpoints prompt -s one "/checkpoints"
if has "$out/checkpoints" "turn 1: run" "turn 2: shout" "turn 3: whisper"; then
	ok "a slash command (/checkpoints)"
else
	bad "a slash command (/checkpoints)" "$out/checkpoints"
fi

run keep prompt -s one "/keep ran.txt"
if git show --name-only --format= HEAD | grep -qx ran.txt; then
	ok "a slash command (/keep ran.txt): the command's file committed"
else
	bad "a slash command (/keep ran.txt): the command's file committed" "$out/keep"
fi

# A new loom-lsp process: the first one stops with its session.
acpx sessions close one >/dev/null 2>&1 || true
run load sessions new --name two --resume-session "$id"
sessions+=(two)
run reloaded prompt -s two "/checkpoints"
if has "$out/reloaded" "resumed the conversation" "turn 1: run" "turn 2: shout" "turn 3: whisper"; then
	ok "the session loaded in a new process, with its history"
else
	bad "the session loaded in a new process, with its history" "$out/reloaded"
	sed 's/^/     | /' "$out/load" | tail -10
fi

# A rewind over ACP, on acpx's connection (rewind.mjs; its own process).
cat "$here/rewind-model.toml" >>"$tmp/run/model.toml"
printf '%s\n' one two three four five six seven eight nine ten >list.txt
git add list.txt && git commit -q -m "list.txt"
if timeout 120 node "$here/rewind.mjs" "$bin" "$proj" "$out/rewind.txt" >"$out/rewind" 2>&1; then
	ok "a rewind over ACP (session/edit_prompt): the agent's change taken back, the user's edit kept"
	sed 's/^/     | /' "$out/rewind.txt"
else
	bad "a rewind over ACP (session/edit_prompt)" "$out/rewind"
	[[ -f $out/rewind.txt ]] && sed 's/^/     | /' "$out/rewind.txt" | tail -30
fi

echo "== acpx took $((SECONDS - start)) s"
if ((failed)); then
	echo "acpx: $failed check(s) FAILED"
	exit 1
fi
echo "acpx: all passed"
