// Package gitcmd starts the git processes loom runs itself (the
// auto-commit, file listings, ignore checks), with the configuration that
// would make git execute a program pinned: git runs nothing a repository's
// configuration names (core.fsmonitor, core.hooksPath, a pager, an askpass
// or ssh program, a credential helper, an external diff, an editor, a
// signing program).
//
// The pins travel in the environment (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n,
// GIT_CONFIG_VALUE_n), which git reads after every configuration file, so
// they win over the system, global, repository and worktree files and
// over anything those include. They are inherited by what git starts,
// and by the user's hooks when loom runs them: a hook's own git commands
// are pinned the same way.
//
// What is not pinned, and why:
//
//   - filter.<driver>.clean/smudge/process, diff.<driver>.textconv and
//     .command, merge.<driver>.driver cannot be pinned by name (they are
//     per driver). loom runs no diff, log -p, blame or merge that would
//     start a diff or merge driver. Filters do run when loom hashes a file
//     (git hash-object --path) and reads one back (cat-file --filters):
//     that is how a Git LFS repository stays one. A repository's
//     .gitattributes (which the agent may write) only picks among drivers
//     the configuration defines, and the configuration is the user's: the
//     sandbox keeps .git/config read-only to commands, and loom does not
//     use a repository a command created (see workspace's repository
//     check). A filter a worktree file defines (one the configuration
//     includes) is pinned empty by the auto-commit's git
//     (gitcommit.Open: [Env]'s extra pins).
//   - uploadpack/receivepack and remote.<name>.* programs: loom never
//     fetches nor pushes.
//   - pager.<cmd>: git starts a pager only when its output is a terminal;
//     loom's git writes into pipes (and core.pager is pinned to cat).
package gitcmd

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// NoHooks is the hooks directory git is pinned to when it must run no
// hook of its own: git commands such as update-ref run hooks
// (reference-transaction), and loom runs the commit hooks itself when
// it runs them at all.
const NoHooks = "/dev/null"

// Pins are the configuration keys git reads a program to execute from,
// each with the value loom's git runs with: none, or a program that does
// nothing. core.hooksPath is added by [Env].
var Pins = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.pager", "cat"},
	{"core.askPass", ""},
	{"core.sshCommand", "false"},
	{"core.gitProxy", ""},
	{"core.editor", ":"},
	{"sequence.editor", ":"},
	{"credential.helper", ""},
	{"diff.external", ""},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
	{"log.showSignature", "false"},
	{"gpg.program", "false"},
	{"gpg.openpgp.program", "false"},
	{"gpg.x509.program", "false"},
	{"gpg.ssh.program", "false"},
	{"gpg.ssh.defaultKeyCommand", ""},
	{"protocol.ext.allow", "never"},
	{"uploadpack.packObjectsHook", ""},
}

// Env returns base (nil: this process's environment) with the pins
// (and extra ones) added, core.hooksPath set to hooks (normally [NoHooks]; "" leaves it
// as the user's configuration has it, only to ask git where the hooks
// are, never to run a command that may start one): after any
// GIT_CONFIG_COUNT entries base already has (the user's own, which the
// pins follow and so override), and with GIT_TERMINAL_PROMPT=0,
// GIT_PAGER=cat and GIT_EDITOR=: so that git never waits for a person.
func Env(base []string, hooks string, extra ...[2]string) []string {
	if base == nil {
		base = os.Environ()
	}
	n := 0
	var env []string
	for _, kv := range base {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_CONFIG_COUNT":
			if c, err := strconv.Atoi(val); err == nil && c > 0 {
				n = c
			}
			continue
		case "GIT_TERMINAL_PROMPT", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND":
			continue
		}
		env = append(env, kv)
	}
	pins := append(append([][2]string(nil), Pins...), extra...)
	if hooks != "" {
		pins = append(pins, [2]string{"core.hooksPath", hooks})
	}
	for i, p := range pins {
		k := strconv.Itoa(n + i)
		env = append(env, "GIT_CONFIG_KEY_"+k+"="+p[0], "GIT_CONFIG_VALUE_"+k+"="+p[1])
	}
	return append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(n+len(pins)),
		"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_EDITOR=:", "GIT_SEQUENCE_EDITOR=:")
}

// Command returns git with args, to run in dir, with [Env] of this
// process's environment and no hooks.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, Program("git"), args...)
	cmd.Dir = dir
	cmd.Env = Env(nil, NoHooks)
	return cmd
}
