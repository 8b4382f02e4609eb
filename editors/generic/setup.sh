#!/usr/bin/env bash
# Sourced by the generic clients' tests: makes $proj, a git repository
# with hello.txt, and a user config of the run's own ($XDG_CONFIG_HOME)
# that chooses the scripted model (model.toml), asks before commands and
# reviews edits. The user's own config needs no trust.
#   $1: the directory to make it in
gen_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
proj=$1/proj
mkdir -p "$proj"
git -C "$proj" init -q -b main
git -C "$proj" config user.name Test
git -C "$proj" config user.email t@example.com
printf 'hello\nworld\n' >"$proj/hello.txt"
git -C "$proj" add -A
git -C "$proj" commit -q -m initial
export XDG_CONFIG_HOME=$1/config XDG_STATE_HOME=$1/state XDG_DATA_HOME=$1/data XDG_CACHE_HOME=$1/cache HOME=$1/home
mkdir -p "$XDG_CONFIG_HOME/loom" "$HOME"
cp "$gen_here/model.toml" "$1/model.toml"
cat >"$XDG_CONFIG_HOME/loom/loom.toml" <<TOML
[model]
provider = "script"
script = "$1/model.toml"
[tools]
bash = "ask"
edits = "review"
[hooks]
auto_commit = true
TOML
unset OPENAI_API_KEY || true
