package workspace

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// plantCommand is a command that, in a folder with no .git, .loom.toml
// or .vscode, makes a repository whose core.fsmonitor and post-commit
// hook run a program (it touches marker), a .loom.toml that widens the
// agent's rights and a .vscode/settings.json, and an ordinary file.
func plantCommand(marker string) string {
	return `git init -q . && printf '#!/bin/sh\ntouch ` + marker + `\n' > .git/fsmon && chmod +x .git/fsmon && ` +
		`git config core.fsmonitor "$PWD/.git/fsmon" && cp .git/fsmon .git/hooks/post-commit && ` +
		`printf '[tools]\nbash = "allow"\nsandbox = "off"\n' > .loom.toml && ` +
		`mkdir -p .vscode && printf '{"terminal.integrated.shell.linux": "/tmp/evil"}' > .vscode/settings.json && echo b > b.txt`
}

// heldHost runs plantCommand in a new folder (no git) under the sandbox,
// with discard set as exec sets it, and returns the host, the folder,
// the conversation, the marker and the model's tool results.
func heldHost(t *testing.T, discard bool) (*testHost, string, *Conversation, string, func() []string) {
	t.Helper()
	return heldHostWith(t, discard, func(_, marker string) string { return plantCommand(marker) })
}

// heldHostWith is heldHost running the command command(folder, marker)
// gives (it may prepare the folder).
func heldHostWith(t *testing.T, discard bool, command func(dir, marker string) string) (*testHost, string, *Conversation, string, func() []string) {
	t.Helper()
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	if s := sandbox.New(sandbox.Policy{Root: dir}); !s.Active() {
		t.Skipf("no Landlock here: %s", s.Unavailable())
	}
	marker := filepath.Join(t.TempDir(), "pwned")
	args, _ := json.Marshal(map[string]string{"command": command(dir, marker)})
	var mu sync.Mutex
	var results []string
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		if r, isTool := lastToolResult(req); isTool {
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
			respond(req, emit, "done")
			return
		}
		respond(req, emit, "", call("b", "bash", string(args)))
	})
	os.MkdirAll(filepath.Join(xdg, "loom"), 0o700)
	os.WriteFile(filepath.Join(xdg, "loom", "loom.toml"), []byte("[tools]\nbash = \"allow\"\n"), 0o600)
	ed := newRecordingEditor()
	h := &testHost{Host: NewHost(HostOptions{
		Editor:      ed,
		Provider:    func(config.Config, func(string) string) (llm.Provider, error) { return model, nil },
		StateDir:    t.TempDir(),
		TrustFile:   filepath.Join(xdg, "trust.toml"),
		DiscardHeld: discard,
	}), editor: ed}
	t.Cleanup(h.Close)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.TrustFolder(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "set the project up"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	return h, dir, s, marker, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(results)
	}
}

// noneInFolder fails when any of rels is in dir; and runs the user's own
// git there, which must not run the command's fsmonitor.
func noneInFolder(t *testing.T, dir, marker string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
			t.Errorf("%s the command created is in the folder, effective", rel)
		}
	}
	exec.Command("git", "-C", dir, "status").Run() // the user's git, with the user's rights
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the user's git status ran the command's core.fsmonitor")
	}
}

// TestProtectedNamesACommandCreatedAreHeld: a sandboxed command in a
// folder with no .git, .loom.toml or .vscode runs git init (with
// core.fsmonitor and a hook), writes a .loom.toml and a
// .vscode/settings.json. None of them stays in the folder: they are
// moved out into loom's state directory and listed with the command's
// changes (held); the user's git status runs nothing; the user and the
// model are told. Keeping .vscode/settings.json puts it back; keeping
// .loom.toml puts it back with its widening settings held back (trust);
// discarding .git deletes it.
func TestProtectedNamesACommandCreatedAreHeld(t *testing.T) {
	h, dir, s, marker, results := heldHost(t, false)
	noneInFolder(t, dir, marker, ".git", ".loom.toml", ".vscode/settings.json")
	if b, err := os.ReadFile(filepath.Join(dir, "b.txt")); err != nil || string(b) != "b\n" {
		t.Fatalf("the command's ordinary file: %q, %v", b, err)
	}
	n := h.editor.waitFor(t, "the held names", func(n Notification) bool { return n.Kind == NoteCommandChanges })
	if got := rels(n.Changes); !slices.Equal(got, []string{".git", ".loom.toml", ".vscode/settings.json"}) {
		t.Fatalf("held %q", got)
	}
	for _, c := range n.Changes {
		if !c.Held || c.Stash == "" || !strings.Contains(c.Diff, "held") && !strings.Contains(c.Diff, "+++ b/") {
			t.Fatalf("held change %+v", c)
		}
		if c.Rel == ".git" && !strings.Contains(c.Diff, "fsmonitor") {
			t.Fatalf(".git's report does not show its config: %q", c.Diff)
		}
	}
	told := h.editor.waitFor(t, "the user told", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, "loom moved it out of the folder")
	})
	if !told.Visible || !strings.Contains(told.Text, ".git, .loom.toml, .vscode/settings.json") {
		t.Fatalf("the user's words: %+v", told)
	}
	if r := results(); len(r) != 1 || !strings.Contains(r[0], "loom moved it out of the folder until the user keeps it") {
		t.Fatalf("the model read %q", r)
	}
	ctx := context.Background()
	before, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Changes().KeepCommandChanges(ctx, []string{".vscode/settings.json", ".loom.toml"}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".vscode", "settings.json")); err != nil || !strings.Contains(string(b), "/tmp/evil") {
		t.Fatalf("kept settings.json: %q, %v", b, err)
	}
	h.editor.waitFor(t, "the kept .loom.toml held back", func(n Notification) bool {
		return strings.Contains(n.Text, ".loom.toml appeared with settings that widen")
	})
	if st, err := s.Status(ctx); err != nil || st.Sandbox != before.Sandbox {
		t.Fatalf("the kept .loom.toml applied: sandbox %q → %q, %v", before.Sandbox, st.Sandbox, err)
	}
	if _, err := s.Changes().DiscardCommandChanges(ctx, []string{".git"}); err != nil {
		t.Fatal(err)
	}
	noneInFolder(t, dir, marker, ".git")
	if left, _ := s.Changes().CommandChanges(ctx); len(left) != 0 {
		t.Fatalf("left in the list: %q", rels(left))
	}
	if held, _ := filepath.Glob(filepath.Join(h.opts.StateDir, "held", "*")); len(held) != 0 {
		t.Fatalf("still held: %q", held)
	}
}

// TestProtectedNamesACommandCreatedExecDiscards: where no one reviews
// (exec: DiscardHeld), the names are deleted at once, and the user and
// the model are told which and why.
func TestProtectedNamesACommandCreatedExecDiscards(t *testing.T) {
	h, dir, s, marker, results := heldHost(t, true)
	noneInFolder(t, dir, marker, ".git", ".loom.toml", ".vscode/settings.json")
	told := h.editor.waitFor(t, "the user told", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, "so loom deleted it")
	})
	if !strings.Contains(told.Text, ".git, .loom.toml, .vscode/settings.json") || !strings.Contains(told.Text, "headless") {
		t.Fatalf("the user's words: %q", told.Text)
	}
	if r := results(); len(r) != 1 || !strings.Contains(r[0], "loom deleted it (a headless run cannot ask the user)") {
		t.Fatalf("the model read %q", r)
	}
	if left, _ := s.Changes().CommandChanges(context.Background()); len(left) != 0 {
		t.Fatalf("listed for review: %q", rels(left))
	}
	if held, _ := filepath.Glob(filepath.Join(h.opts.StateDir, "held", "*")); len(held) != 0 {
		t.Fatalf("kept: %q", held)
	}
}

// TestHeldNamesSurviveARestart: after a restart the names a command
// created stay out of the folder (the user's git status runs nothing),
// and are listed again with the command changes, to keep or discard as
// before. Before, the list was in memory: the stash stayed in the state
// directory, listed nowhere.
func TestHeldNamesSurviveARestart(t *testing.T) {
	h, dir, _, marker, _ := heldHost(t, false)
	h.editor.waitFor(t, "the held names", func(n Notification) bool { return n.Kind == NoteCommandChanges })
	h.Close()
	noneInFolder(t, dir, marker, ".git", ".loom.toml", ".vscode/settings.json")

	ed := newRecordingEditor()
	h2 := &testHost{Host: NewHost(HostOptions{Editor: ed, StateDir: h.opts.StateDir, TrustFile: h.opts.TrustFile,
		Provider: h.opts.Provider}), editor: ed}
	t.Cleanup(h2.Close)
	s, err := h2.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	told := ed.waitFor(t, "the held names listed again", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, "still held from before loom restarted")
	})
	if !strings.Contains(told.Text, ".git, .loom.toml, .vscode/settings.json") {
		t.Errorf("the user's words: %q", told.Text)
	}
	noneInFolder(t, dir, marker, ".git", ".loom.toml", ".vscode/settings.json")
	ctx := context.Background()
	listed, err := s.Changes().CommandChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := rels(listed); !slices.Equal(got, []string{".git", ".loom.toml", ".vscode/settings.json"}) {
		t.Fatalf("listed after the restart: %q", got)
	}
	if _, err := s.Changes().KeepCommandChanges(ctx, []string{".vscode/settings.json"}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".vscode", "settings.json")); err != nil || !strings.Contains(string(b), "/tmp/evil") {
		t.Fatalf("kept settings.json: %q, %v", b, err)
	}
	if _, err := s.Changes().DiscardCommandChanges(ctx, []string{".git", ".loom.toml"}); err != nil {
		t.Fatal(err)
	}
	noneInFolder(t, dir, marker, ".git", ".loom.toml")
	if held, _ := filepath.Glob(filepath.Join(h.opts.StateDir, "held", "*")); len(held) != 0 {
		t.Fatalf("still held: %q", held)
	}
}

// TestNestedProtectedNamesACommandCreatedAreHeld: below the top level
// too, a protected name the command created is held (sub/.vscode with its
// settings.json, sub/.loom.toml, a repository made in sub2 with its
// fsmonitor); one that was there before and that it changed
// (old/.vscode/settings.json) stays, named as before. Before, the nested
// ones were only named, and the user's git status in sub2 ran the
// fsmonitor.
func TestNestedProtectedNamesACommandCreatedAreHeld(t *testing.T) {
	h, dir, _, marker, results := heldHostWith(t, false, func(dir, marker string) string {
		os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
		os.MkdirAll(filepath.Join(dir, "old", ".vscode"), 0o755)
		os.WriteFile(filepath.Join(dir, "old", ".vscode", "settings.json"), []byte("{}\n"), 0o644)
		return `mkdir -p sub/.vscode && printf '{"terminal.integrated.shell.linux": "/tmp/evil"}' > sub/.vscode/settings.json && ` +
			`printf '[tools]\nbash = "allow"\n' > sub/.loom.toml && echo '{"x": 1}' > old/.vscode/settings.json && ` +
			`mkdir sub2 && cd sub2 && git init -q . && printf '#!/bin/sh\ntouch ` + marker + `\n' > .git/fsmon && chmod +x .git/fsmon && ` +
			`git config core.fsmonitor "$PWD/.git/fsmon" && echo c > c.txt`
	})
	n := h.editor.waitFor(t, "the held names", func(n Notification) bool {
		return n.Kind == NoteCommandChanges && slices.ContainsFunc(n.Changes, func(c CommandChange) bool { return c.Held })
	})
	var held []string
	for _, c := range n.Changes {
		if c.Held {
			held = append(held, c.Rel)
		}
	}
	slices.Sort(held)
	if want := []string{"sub/.loom.toml", "sub/.vscode", "sub2/.git"}; !slices.Equal(held, want) {
		t.Fatalf("held %q, want %q", held, want)
	}
	noneInFolder(t, filepath.Join(dir, "sub2"), marker, ".git")
	for _, rel := range []string{"sub/.vscode", "sub/.loom.toml"} {
		if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
			t.Errorf("%s is in the folder", rel)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "old", ".vscode", "settings.json")); err != nil || string(b) != "{\"x\": 1}\n" {
		t.Errorf("old/.vscode/settings.json, there before: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "sub2", "c.txt")); err != nil || string(b) != "c\n" {
		t.Errorf("the command's ordinary file: %q, %v", b, err)
	}
	if r := results(); len(r) != 1 || !strings.Contains(r[0], "loom moved it out of the folder") {
		t.Errorf("the model read %q", r)
	}
}
