package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// TestNoCommitIntoARepositoryACommandCreated: a folder that is no git
// repository; the agent's command runs git init and plants
// core.fsmonitor and a pre-commit hook in the new .git. loom holds it
// out of the folder; once the user keeps it, loom reports the
// repository and does not use it (no commit, no hook, no fsmonitor) until
// the user confirms it with loom.trust; then it commits into it.
func TestNoCommitIntoARepositoryACommandCreated(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, kv := range [][2]string{{"GIT_AUTHOR_NAME", "T"}, {"GIT_AUTHOR_EMAIL", "t@example.com"}, {"GIT_COMMITTER_NAME", "T"}, {"GIT_COMMITTER_EMAIL", "t@example.com"}} {
		t.Setenv(kv[0], kv[1])
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	marks := t.TempDir()
	monitor, hookRan := filepath.Join(marks, "fsmonitor-ran"), filepath.Join(marks, "hook-ran")
	plant := "git init -q . && printf '#!/bin/sh\\necho ran > " + monitor + "\\n' > ../mon.sh && chmod +x ../mon.sh && git config core.fsmonitor \"$PWD/../mon.sh\" && " +
		"printf '#!/bin/sh\\necho ran > " + hookRan + "\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"
	plant = strings.ReplaceAll(plant, "\"", `\"`)
	// Each turn runs its batches, counted from the turn's prompt.
	turns := map[string][][]fsm.ToolCall{
		"make a file": {{call("b", "bash", `{"command":"`+plant+`"}`)}, {call("w", "write_file", `{"path":"new.txt","content":"agent\n"}`)}},
		"edit":        {{call("w1", "write_file", `{"path":"first.txt","content":"agent\n"}`)}},
		"again":       {{call("w2", "write_file", `{"path":"second.txt","content":"agent\n"}`)}},
	}
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		n, prompt := 0, ""
		for _, m := range req.Messages {
			switch {
			case m.Role == fsm.RoleUser && !m.Note:
				n, prompt = 0, m.Content
			case m.Role == fsm.RoleAssistant && len(m.ToolCalls) > 0:
				n++
			}
		}
		if b := turns[prompt]; n < len(b) {
			respond(req, emit, "", b[n]...)
			return
		}
		respond(req, emit, "done")
	})
	// Commands allowed: only the unconfirmed repository stops the hooks.
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow; c.Tools.Sandbox = config.SandboxOff })
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "make a file"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	// The repository is held out of the folder (heldnames.go) until the
	// user keeps it; then it is a repository loom has not confirmed.
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		t.Fatal("the command's repository is in the folder, not held")
	}
	if _, err := s.Changes().KeepCommandChanges(context.Background(), []string{".git"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "edit"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 2)
	note := h.editor.waitFor(t, "the report of the new repository", func(n Notification) bool {
		return strings.Contains(n.Text, "a git repository appeared")
	})
	if !strings.Contains(note.Text, "loom.trust") || !strings.Contains(note.Text, "no git repository") {
		t.Fatalf("report: %s %q", note.Kind, note.Text)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		t.Fatalf("the command did not make the repository: %v", err)
	}
	if out := runGit(t, dir, "rev-list", "--all"); out != "" {
		t.Fatalf("committed into the new repository: %s", out)
	}
	for _, m := range []string{monitor, hookRan} {
		if _, err := os.Stat(m); err == nil {
			t.Fatalf("loom ran the new repository's %s", filepath.Base(m))
		}
	}
	// The user confirms: the next turn commits into it (its hooks run,
	// commands being allowed; its fsmonitor never does, in loom's git).
	if _, err := h.TrustFolder(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 3)
	h.editor.waitFor(t, "the commit after loom.trust", func(n Notification) bool { return n.Kind == NoteCommit })
	if _, err := os.Stat(monitor); err == nil {
		t.Fatal("loom's git ran core.fsmonitor")
	}
}
