#!/usr/bin/env bash
# Headless end-to-end test of the Neovim plugin against the real loom-lsp
# binary and the scripted model.
#
#   editors/neovim/test/run.sh
#
# Environment:
#   NVIM      the nvim to run (default: nvim on PATH); must be 0.9 or newer,
#             else the test is skipped (exit 0) with a message.
#   LOOM_LSP  a prebuilt loom-lsp (default: built from this checkout).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
plugin=$(cd "$here/.." && pwd)
repo=$(cd "$plugin/../.." && pwd)
nvim=${NVIM:-nvim}

if ! command -v "$nvim" >/dev/null 2>&1; then
	echo "SKIP: nvim not found (set NVIM, or run editors/neovim/test/nvim.sh to get one)"
	exit 0
fi
if ! "$nvim" --headless -u NONE -c 'if has("nvim-0.9") | qa! | else | cq | endif' >/dev/null 2>&1; then
	# Too old for the plugin; :checkhealth loom must still say so plainly.
	"$here/oldnvim.sh" "$nvim"
	echo "SKIP: $("$nvim" --version | head -1) is too old for the e2e test; the plugin needs Neovim 0.9+"
	exit 0
fi

tmp=$(mktemp -d)
# A language server that outlives nvim by a moment may still write into
# the cache while it is removed ("Directory not empty"): a second try,
# and a leftover temporary directory never fails the run.
trap 'rm -rf "$tmp" 2>/dev/null || rm -rf "$tmp" || true' EXIT

if [[ -n "${LOOM_LSP:-}" ]]; then
	bin=$LOOM_LSP
else
	bin=$tmp/bin/loom-lsp
	(cd "$repo" && go build -o "$bin" ./cmd/loom-lsp)
fi

# The project: a git repo with greet.txt and a scripted model that reads it,
# edits it and answers.
proj=$tmp/proj
mkdir -p "$proj"
git -C "$proj" init -q -b main
git -C "$proj" config user.name Test
git -C "$proj" config user.email t@example.com
printf 'hello\n' >"$proj/greet.txt"
cat >"$proj/.loom.toml" <<'TOML'
[model]
provider = "script"
script = "model.toml"
TOML
cat >"$proj/model.toml" <<'TOML'
# The second ask (:1LoomAsk) sends line 1 as the selection, which the
# server adds to the user message.
[[step]]
match.last_user_contains = "hello, world"
text = ["The selection ", "greets the world."]

# :LoomCompact's summarisation request.
[[step]]
match.last_user_contains = "about to be compacted"
text = ["Goals: greet the world."]

# :LoomNew's conversation.
[[step]]
match.last_user_contains = "second thread"
text = ["Second ", "thread ", "answer."]

# A long, slow answer, cancelled by the test.
[[step]]
match.last_user_contains = "tell a long story"
pace = "300ms"
text = ["Once ", "upon ", "a ", "time ", "there ", "was ", "a ", "very ", "long ", "story ", "that ", "never ", "ended."]

[[step]]
match.last_role = "user"
reasoning = ["NVIM-THOUGHT: read ", "it first.\nThen edit."]
text = ["Reading ", "the file."]
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"greet.txt"}'

[[step]]
match.last_tool_result_contains = "hello"
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"greet.txt","old_string":"hello","new_string":"hello, world"}'

[[step]]
match.last_tool_result_contains = "edited greet.txt"
text = ["Done: ", "greet.txt ", "now greets the world."]
usage = { prompt = 100, completion = 7, cached = 64 }
TOML
git -C "$proj" add -A
git -C "$proj" commit -q -m initial

# Config and state of the run's own; no model keys.
export XDG_CONFIG_HOME=$tmp/config XDG_STATE_HOME=$tmp/state XDG_DATA_HOME=$tmp/data XDG_CACHE_HOME=$tmp/cache
unset OPENAI_API_KEY || true
# The project's .loom.toml chooses the (scripted) model, which loom-lsp
# honours only for a folder the user trusts: trust it in the user's config.
mkdir -p "$XDG_CONFIG_HOME/loom"
printf '[trust]\nfolders = ["%s"]\n' "$proj" >"$XDG_CONFIG_HOME/loom/loom.toml"

cd "$proj"
LOOM_TEST_BIN=$bin LOOM_TEST_PROJ=$proj LOOM_TEST_PLUGIN=$plugin \
	timeout 120 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c "luafile $here/e2e.lua" greet.txt

# After :qa the server exits promptly (it used to outlive Neovim by
# 1.2-1.6 s): give it a generous 3 s, and report how long it took.
start=$(date +%s%N)
while pgrep -f -x "$bin( .*)?" >/dev/null; do
	if (($(date +%s%N) - start > 3000000000)); then
		echo "FAIL: loom-lsp still runs 3 s after :qa" >&2
		exit 1
	fi
	sleep 0.05 # polling the process table: there is no event to wait on
done
echo "ok   loom-lsp gone $((($(date +%s%N) - start) / 1000000)) ms after nvim exited"

# Review and rewind: a second project under tools.edits = "review".
# The first hour (README): an untrusted project whose .loom.toml sets the
# model; the user trusts it with :LoomTrust.
fproj=$tmp/first
mkdir -p "$fproj"
git -C "$fproj" init -q -b main
printf 'hi\n' >"$fproj/notes.txt"
cat >"$fproj/.loom.toml" <<'TOML'
[model]
provider = "script"
script = "model.toml"
TOML
cat >"$fproj/model.toml" <<'TOML'
[[step]]
match.last_user_contains = "say hello"
text = ["Hello from ", "the project model."]
TOML
(cd "$fproj" && LOOM_TEST_BIN=$bin timeout 120 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c "luafile $here/first_hour_e2e.lua" notes.txt)

# :LoomUndo is no "changed on disk" news: a project whose model reads two
# files and edits one (neither open in Neovim), then the user undoes it.
uproj=$tmp/undo
mkdir -p "$uproj"
git -C "$uproj" init -q -b main
git -C "$uproj" config user.name Test
git -C "$uproj" config user.email t@example.com
printf 'hello\n' >"$uproj/greet.txt"
printf 'other\n' >"$uproj/other.txt"
printf 'notes\n' >"$uproj/notes.md"
cat >"$uproj/.loom.toml" <<'TOML'
[model]
provider = "script"
script = "model.toml"
TOML
cat >"$uproj/model.toml" <<'TOML'
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"greet.txt"}'
  [[step.tool_call]]
  id = "r2"
  name = "read_file"
  arguments = '{"path":"other.txt"}'
[[step]]
match.last_tool_result_contains = "other"
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"greet.txt","old_string":"hello","new_string":"hello, world"}'
[[step]]
match.last_tool_result_contains = "edited greet.txt"
text = ["Edited greet.txt."]
TOML
git -C "$uproj" add -A
git -C "$uproj" commit -q -m initial
printf '[trust]\nfolders = ["%s", "%s"]\n' "$proj" "$uproj" >"$XDG_CONFIG_HOME/loom/loom.toml"
(cd "$uproj" && LOOM_TEST_BIN=$bin LOOM_TEST_PROJ=$uproj timeout 120 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c "luafile $here/undo_quiet_e2e.lua" notes.md)

# Plan mode and the todo list: the model plans read-only, its edit is
# refused, the plan is accepted with :LoomPlanDecide build and carried out.
pproj=$tmp/plan
mkdir -p "$pproj"
git -C "$pproj" init -q -b main
git -C "$pproj" config user.name Test
git -C "$pproj" config user.email t@example.com
printf 'hello\n' >"$pproj/greet.txt"
printf 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==' | base64 -d >"$pproj/pixel.png"
cat >"$pproj/.loom.toml" <<'TOML'
[model]
provider = "script"
script = "model.toml"
images = "on"
TOML
cat >"$pproj/model.toml" <<'TOML'
[[step]]
match.last_user_contains = "what is in the picture"
text = ["A single pixel."]
[[step]]
match.last_user_contains = "greet the world"
  [[step.tool_call]]
  id = "u1"
  name = "update_plan"
  arguments = '{"plan":[{"step":"look at greet.txt","status":"in_progress"},{"step":"greet the world","status":"pending"}]}'
  [[step.tool_call]]
  id = "e0"
  name = "edit_file"
  arguments = '{"path":"greet.txt","old_string":"hello","new_string":"hi"}'
[[step]]
match.last_tool_result_contains = "edit_file is refused in plan mode"
  [[step.tool_call]]
  id = "p1"
  name = "propose_plan"
  arguments = '{"plan":"1. change hello to hello, world in greet.txt"}'
[[step]]
match.last_tool_result_contains = "accepted the plan"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"greet.txt"}'
[[step]]
match.last_tool_result_contains = "hello"
match.last_role = "tool"
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"greet.txt","old_string":"hello","new_string":"hello, world"}'
[[step]]
match.last_tool_result_contains = "edited greet.txt"
  [[step.tool_call]]
  id = "u2"
  name = "update_plan"
  arguments = '{"plan":[{"step":"look at greet.txt","status":"completed"},{"step":"greet the world","status":"completed"}]}'
[[step]]
match.last_tool_result_contains = "plan updated"
text = ["Done."]
TOML
mkdir -p "$pproj/.claude/commands"
printf -- '---\ndescription: Greet someone\n---\nGreet $ARGUMENTS.\n' >"$pproj/.claude/commands/greet.md"
git -C "$pproj" add -A
git -C "$pproj" commit -q -m initial
printf '[trust]\nfolders = ["%s", "%s"]\n' "$proj" "$pproj" >"$XDG_CONFIG_HOME/loom/loom.toml"
(cd "$pproj" && LOOM_TEST_BIN=$bin LOOM_TEST_PROJ=$pproj timeout 120 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c "luafile $here/plan_e2e.lua" greet.txt)

# Subagents: two workers, one line each; :LoomStopSubagent stops the one
# that hangs (its model never answers) and the conversation goes on.
sproj=$tmp/subagents
mkdir -p "$sproj"
git -C "$sproj" init -q -b main
printf 'hello\n' >"$sproj/greet.txt"
cat >"$sproj/.loom.toml" <<'TOML'
[model]
provider = "script"
script = "model.toml"
TOML
cat >"$sproj/model.toml" <<'TOML'
[[step]]
match.last_user_contains = "delegate it"
  [[step.tool_call]]
  id = "w1"
  name = "agent"
  arguments = '{"agent":"worker","task":"wait forever"}'
  [[step.tool_call]]
  id = "w2"
  name = "agent"
  arguments = '{"agent":"worker","task":"say hi"}'
[[step]]
match.last_user_contains = "wait forever"
delay = "10m"
text = ["never"]
[[step]]
match.last_user_contains = "say hi"
usage = { prompt = 10, completion = 5, total = 15 }
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"greet.txt"}'
[[step]]
match.last_tool_result_contains = "hello"
usage = { prompt = 10, completion = 5, total = 15 }
text = ["hi from w2"]
[[step]]
match.last_role = "tool"
text = ["The parent goes on."]
TOML
git -C "$sproj" add -A
git -C "$sproj" commit -q -m initial
printf '[trust]\nfolders = ["%s", "%s", "%s"]\n' "$proj" "$pproj" "$sproj" >"$XDG_CONFIG_HOME/loom/loom.toml"
(cd "$sproj" && LOOM_TEST_BIN=$bin LOOM_TEST_PROJ=$sproj timeout 120 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c "luafile $here/subagents_e2e.lua" greet.txt)

rproj=$tmp/review
mkdir -p "$rproj"
git -C "$rproj" init -q -b main
git -C "$rproj" config user.name Test
git -C "$rproj" config user.email t@example.com
printf 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n' >"$rproj/r.txt"
cat >"$rproj/.loom.toml" <<'TOML'
[model]
provider = "script"
script = "model.toml"
[tools]
edits = "review"
bash = "allow"
TOML
cat >"$rproj/model.toml" <<'TOML'
[[step]]
match.last_user_contains = "change b and i"
match.last_role = "user"
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"r.txt"}'
[[step]]
match.last_user_contains = "change b and i"
match.last_tool_result_contains = "j"
  [[step.tool_call]]
  name = "write_file"
  arguments = '{"path":"r.txt","content":"a\nB agent\nc\nd\ne\nf\ng\nh\nI agent\nj\n"}'
[[step]]
match.last_user_contains = "change b and i"
match.last_role = "tool"
text = ["noted"]

[[step]]
match.last_user_contains = "turn two"
match.last_role = "user"
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"r.txt"}'
[[step]]
match.last_user_contains = "turn two"
match.last_tool_result_contains = "j"
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"r.txt","old_string":"c\n","new_string":"C two\n"}'
[[step]]
match.last_user_contains = "turn two"
match.last_role = "tool"
text = ["done two"]

[[step]]
match.last_user_contains = "turn three"
match.last_role = "user"
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"sed -i -e s/^a$/A-cmd/ -e s/^j$/J-cmd/ r.txt"}'
[[step]]
match.last_user_contains = "turn three"
match.last_role = "tool"
text = ["done three"]
TOML
git -C "$rproj" add -A
git -C "$rproj" commit -q -m initial
printf '[trust]\nfolders = ["%s", "%s"]\n' "$proj" "$rproj" >"$XDG_CONFIG_HOME/loom/loom.toml"
cd "$rproj"
LOOM_TEST_BIN=$bin LOOM_TEST_PROJ=$rproj \
	timeout 120 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c "luafile $here/review_e2e.lua" r.txt

# Diagnostics: gopls attached in Neovim; the model hears what it broke.
gopls=$(command -v gopls || echo "$(go env GOPATH)/bin/gopls")
if [[ -x "$gopls" ]]; then
	dproj=$tmp/diag
	mkdir -p "$dproj"
	git -C "$dproj" init -q -b main
	git -C "$dproj" config user.name Test
	git -C "$dproj" config user.email t@example.com
	printf 'module example.com/m\n\ngo 1.22\n' >"$dproj/go.mod"
	printf 'package main\n\n// Pre-existing: not the edit'"'"'s doing.\nvar _ = missing\n\nfunc main() {\n\tprintln("hi")\n}\n' >"$dproj/main.go"
	cat >"$dproj/.loom.toml" <<'TOML'
[model]
provider = "script"
script = "model.toml"
[tools]
diagnostics_wait = "90s"
TOML
	cat >"$dproj/model.toml" <<'TOML'
[[step]]
match.last_user_contains = "shout"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"main.go"}'
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"main.go","old_string":"println(\"hi\")","new_string":"println(shout)"}'
[[step]]
match.last_tool_result_contains = "main.go:7:10: error: undefined: shout"
  [[step.tool_call]]
  id = "e2"
  name = "edit_file"
  arguments = '{"path":"main.go","old_string":"println(shout)","new_string":"println(\"HI\")"}'
[[step]]
match.last_tool_result_contains = "no new problems in main.go"
text = ["Fixed: main.go builds again."]
TOML
	git -C "$dproj" add -A
	git -C "$dproj" commit -q -m initial
	printf '[trust]\nfolders = ["%s", "%s"]\n' "$proj" "$dproj" >"$XDG_CONFIG_HOME/loom/loom.toml"
	(cd "$dproj" && LOOM_TEST_BIN=$bin LOOM_TEST_PROJ=$dproj LOOM_TEST_GOPLS=$gopls timeout 120 "$nvim" --headless -u NONE -i NONE -n \
		--cmd "set rtp^=$plugin" \
		-c "luafile $here/diagnostics_e2e.lua" main.go)
elif [[ -n "${LOOM_REQUIRE_GOPLS:-}" ]]; then
	echo "FAIL: gopls not found and LOOM_REQUIRE_GOPLS is set" >&2
	exit 1
else
	echo "SKIP: diagnostics e2e: gopls not found (go install golang.org/x/tools/gopls@v0.23.0)"
fi
# Diagnostics, late: a language server that never publishes after the
# edit; Neovim's answer says so (late), the model hears "not available".
lproj=$tmp/late
mkdir -p "$lproj"
git -C "$lproj" init -q -b main
git -C "$lproj" config user.name Test
git -C "$lproj" config user.email t@example.com
printf 'one\ntwo\n' >"$lproj/notes.txt"
cat >"$lproj/.loom.toml" <<'TOML'
[model]
provider = "script"
script = "model.toml"
[tools]
diagnostics_wait = "3s"
TOML
cat >"$lproj/model.toml" <<'TOML'
[[step]]
match.last_user_contains = "change it"
match.last_role = "user"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"notes.txt"}'
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"notes.txt","old_string":"two","new_string":"TWO"}'
[[step]]
match.last_tool_result_contains = "diagnostics were not available for notes.txt"
text = ["Told: not available."]
[[step]]
match.last_role = "tool"
text = ["Silence taken for no problems."]
TOML
git -C "$lproj" add -A
git -C "$lproj" commit -q -m initial
printf '[trust]\nfolders = ["%s", "%s"]\n' "$proj" "$lproj" >"$XDG_CONFIG_HOME/loom/loom.toml"
(cd "$lproj" && LOOM_TEST_BIN=$bin LOOM_TEST_PROJ=$lproj LOOM_TEST_SILENTLS=$here/silentls.py timeout 120 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c "luafile $here/diagnostics_late_e2e.lua" notes.txt)
# Inline completion: a project with add.py; [completion] from setup's
# init_options, against a scripted /infill inside Neovim.
iproj=$tmp/inline
mkdir -p "$iproj"
git -C "$iproj" init -q -b main
printf 'def add(a, b):\n    \n' >"$iproj/add.py"
(cd "$iproj" && LOOM_TEST_BIN=$bin timeout 120 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c "luafile $here/inline_e2e.lua" add.py)
# loom/elicit (an MCP server's question) with a scripted vim.ui.
(cd "$tmp" && timeout 120 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c "luafile $here/elicit_test.lua")
# loom/resources (MCP resources attached to a prompt) with a scripted vim.ui.
(cd "$tmp" && timeout 120 "$nvim" --headless -u NONE -i NONE -n \
	--cmd "set rtp^=$plugin" \
	-c "luafile $here/resources_test.lua")

echo "neovim e2e: ok"
