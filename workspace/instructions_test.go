package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// answeringServer is a scripted model server that answers every request
// with "ok", counting the prompt as a server does (its bytes / 4: a
// server that reports far fewer tokens than it was sent has cut it).
func answeringServer(t *testing.T) (*llmtest.Server, llm.Provider) {
	t.Helper()
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{"ok"}, Usage: &llmtest.Usage{Prompt: int64(len(r.Body) / 4), Completion: 1}}
	})
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.BaseURL(), Model: "test-model", IdleTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return srv, p
}

// askOnce asks prompt and waits for the turn to end well.
func askOnce(t *testing.T, h *testHost, s *Conversation, prompt string) {
	t.Helper()
	turn, err := s.Ask(context.Background(), prompt)
	if err != nil {
		t.Fatal(err)
	}
	if end := h.editor.turnEnded(t, turn); end.Outcome != fsm.TurnDone {
		t.Fatalf("turn %d ended %s: %q", turn, end.Outcome, h.editor.errors())
	}
}

// systemOf returns the system message of the server's last request.
func systemOf(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 || len(reqs[len(reqs)-1].Messages) == 0 {
		t.Fatal("no request")
	}
	m := reqs[len(reqs)-1].Messages[0]
	if m.Role != "system" {
		t.Fatalf("the first message is %s, not system", m.Role)
	}
	return m.Content
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func statusOf(t *testing.T, s *Conversation) Status {
	t.Helper()
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// In a monorepo the AGENTS.md of the repository root and of each
// directory down to the workspace folder join the system prompt, root
// first, each under a heading naming it; those below the folder or beside
// it do not.
func TestInstructionsFromTheRepositoryRootDownToTheFolder(t *testing.T) {
	repo := gitRepo(t, map[string]string{
		"AGENTS.md":                       "Root rule: run make test before you answer.\n",
		"services/README":                 "no AGENTS.md here\n",
		"services/api/AGENTS.md":          "API rule: handlers stay thin.\n",
		"services/api/internal/AGENTS.md": "below the folder: not read\n",
		"services/web/AGENTS.md":          "a sibling: not read\n",
	})
	folder := filepath.Join(repo, "services", "api")
	srv, p := answeringServer(t)
	h := newTestHost(t, p, nil)
	s, _ := h.AddFolder(folder)
	askOnce(t, h, s, "hello")

	sys := systemOf(t, srv)
	root, nested := filepath.Join(repo, "AGENTS.md"), filepath.Join(folder, "AGENTS.md")
	i := strings.Index(sys, "## "+root+"\n\nRoot rule: run make test before you answer.")
	j := strings.Index(sys, "## "+nested+"\n\nAPI rule: handlers stay thin.")
	if i < 0 || j < 0 || j < i {
		t.Fatalf("want the root's then the folder's instructions under headings naming them, got:\n%s", sys)
	}
	if !strings.HasPrefix(sys, "You are loom") || !strings.Contains(sys, "# Project instructions") {
		t.Fatalf("the instructions should follow the system prompt:\n%s", sys)
	}
	for _, no := range []string{"below the folder", "a sibling"} {
		if strings.Contains(sys, no) {
			t.Fatalf("the system prompt holds %q:\n%s", no, sys)
		}
	}
	st := statusOf(t, s)
	want := []InstructionFile{
		{Path: root, Bytes: int64(len("Root rule: run make test before you answer.\n")), Included: len("Root rule: run make test before you answer.\n")},
		{Path: nested, Bytes: int64(len("API rule: handlers stay thin.\n")), Included: len("API rule: handlers stay thin.\n")},
	}
	if len(st.Instructions) != len(want) || st.Instructions[0] != want[0] || st.Instructions[1] != want[1] {
		t.Fatalf("loom.status instructions = %+v, want %+v", st.Instructions, want)
	}
}

// Outside a repository only the folder's own AGENTS.md is read.
func TestInstructionsOutsideARepository(t *testing.T) {
	parent := t.TempDir()
	writeFile(t, filepath.Join(parent, "AGENTS.md"), "PARENT-ONLY: not a repository root\n")
	folder := filepath.Join(parent, "project")
	writeFile(t, filepath.Join(folder, "AGENTS.md"), "Folder rule.\n")
	srv, p := answeringServer(t)
	h := newTestHost(t, p, nil)
	s, _ := h.AddFolder(folder)
	askOnce(t, h, s, "hello")
	sys := systemOf(t, srv)
	if !strings.Contains(sys, "Folder rule.") || strings.Contains(sys, "PARENT-ONLY") {
		t.Fatalf("system prompt:\n%s", sys)
	}
	if st := statusOf(t, s); len(st.Instructions) != 1 {
		t.Fatalf("loom.status instructions = %+v", st.Instructions)
	}
}

// Editing, creating or removing an AGENTS.md (here the repository root's,
// outside the workspace folder, and the folder's own) is seen by the real
// file watcher; the conversation goes on with the new instructions from
// its next turn, and the change is journaled, so a restart resumes the
// conversation with them.
func TestInstructionsReloadWhenAFileChanges(t *testing.T) {
	repo := gitRepo(t, map[string]string{"AGENTS.md": "Rule one.\n", "app/main.go": "package main\n"})
	folder := filepath.Join(repo, "app")
	srv, p := answeringServer(t)
	stateDir := t.TempDir()
	h := newTestHostIn(t, stateDir, p, nil)
	s, _ := h.AddFolder(folder)
	waitReady(t, s)
	askOnce(t, h, s, "first")
	if sys := systemOf(t, srv); !strings.Contains(sys, "Rule one.") {
		t.Fatalf("system prompt:\n%s", sys)
	}

	writeFile(t, filepath.Join(repo, "AGENTS.md"), "Rule two.\n")
	h.editor.waitFor(t, "the root's instructions to reload", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.HasPrefix(n.Text, "project instructions reloaded")
	})
	askOnce(t, h, s, "second")
	sys := systemOf(t, srv)
	if !strings.Contains(sys, "Rule two.") || strings.Contains(sys, "Rule one.") {
		t.Fatalf("after the edit, system prompt:\n%s", sys)
	}
	if got := len(srv.Requests()[1].Messages); got != 4 {
		t.Fatalf("the second turn should go on with the conversation (4 messages), sent %d", got)
	}

	writeFile(t, filepath.Join(folder, "AGENTS.md"), "App rule.\n")
	h.editor.waitFor(t, "the folder's new instructions", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, filepath.Join(folder, "AGENTS.md"))
	})
	if st := statusOf(t, s); len(st.Instructions) != 2 || st.Instructions[1].Bytes != int64(len("App rule.\n")) {
		t.Fatalf("loom.status instructions = %+v", st.Instructions)
	}
	if err := os.Remove(filepath.Join(repo, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	h.editor.waitFor(t, "the removal", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.HasPrefix(n.Text, "project instructions reloaded") &&
			strings.Contains(n.Text, filepath.Join(folder, "AGENTS.md")) && !strings.Contains(n.Text, filepath.Join(repo, "AGENTS.md"))
	})
	askOnce(t, h, s, "third")
	sys = systemOf(t, srv)
	if !strings.Contains(sys, "App rule.") || strings.Contains(sys, "Rule two.") {
		t.Fatalf("after adding the folder's and removing the root's, system prompt:\n%s", sys)
	}

	// A restart replays the journal: the conversation's system prompt is
	// the one its last turn used.
	h.Close()
	h2 := newTestHostIn(t, stateDir, p, nil)
	s2, _ := h2.AddFolder(folder)
	msgs, err := s2.History(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 7 || !strings.Contains(msgs[0].Content, "App rule.") {
		t.Fatalf("resumed %d messages, system prompt:\n%s", len(msgs), msgs[0].Content)
	}
}

// The instructions are capped at InstructionsMaxBytes in all, cut at a
// line end, with a note naming what was left out; loom.status shows the
// sizes read and included.
func TestInstructionsAreCappedWithANote(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n" // 100 bytes
	rootText := strings.Repeat(line, 200)  // 20,000 bytes
	appText := strings.Repeat(line, 200)
	repo := gitRepo(t, map[string]string{"AGENTS.md": rootText, "app/AGENTS.md": appText, "app/deep/AGENTS.md": "Deep rule.\n"})
	folder := filepath.Join(repo, "app", "deep")
	srv, p := answeringServer(t)
	h := newTestHost(t, p, nil)
	s, _ := h.AddFolder(folder)
	askOnce(t, h, s, "hello")

	st := statusOf(t, s)
	if len(st.Instructions) != 3 {
		t.Fatalf("loom.status instructions = %+v", st.Instructions)
	}
	root, app, deep := st.Instructions[0], st.Instructions[1], st.Instructions[2]
	wantApp := (InstructionsMaxBytes - len(rootText)) / 100 * 100 // whole lines only
	if root.Included != len(rootText) || app.Bytes != int64(len(appText)) || app.Included != wantApp || deep.Included != 0 || deep.Bytes != int64(len("Deep rule.\n")) {
		t.Fatalf("sizes: %+v", st.Instructions)
	}
	sys := systemOf(t, srv)
	if lines := strings.Count(sys, line[:99]); lines != (len(rootText)+wantApp)/100 {
		t.Fatalf("the prompt holds %d lines of instructions, want %d", lines, (len(rootText)+wantApp)/100)
	}
	note := "[loom: the project instructions were cut at 32 KiB; left out: the rest of " + filepath.Join(repo, "app", "AGENTS.md")
	if !strings.Contains(sys, note) || !strings.Contains(sys, filepath.Join(folder, "AGENTS.md")+" (0 of 11 bytes)") || strings.Contains(sys, "Deep rule.") {
		t.Fatalf("no note of what was cut, or too much kept:\n%s", sys[len(sys)-600:])
	}
}

// A file with no line end is cut between characters, never inside one.
func TestInstructionsCutKeepsWholeCharacters(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("é", InstructionsMaxBytes) // 2 bytes each, no newline
	writeFile(t, filepath.Join(dir, "AGENTS.md"), text)
	in := readInstructions([]string{filepath.Join(dir, "AGENTS.md")})
	if len(in.files) != 1 || in.files[0].Included != InstructionsMaxBytes || in.files[0].Bytes != int64(len(text)) {
		t.Fatalf("files = %+v", in.files)
	}
	if strings.ContainsRune(in.text, '\uFFFD') {
		t.Fatal("a character was cut in two")
	}
	writeFile(t, filepath.Join(dir, "AGENTS.md"), "a"+text) // odd: the cut falls inside a character
	in = readInstructions([]string{filepath.Join(dir, "AGENTS.md")})
	if in.files[0].Included != InstructionsMaxBytes-1 || strings.ContainsRune(in.text, '\uFFFD') {
		t.Fatalf("included %d bytes; replacement character: %v", in.files[0].Included, strings.ContainsRune(in.text, '\uFFFD'))
	}
}

// An AGENTS.md that is a symlink to a file outside the repository, or
// not a regular file (a FIFO would block the read forever), is not read.
func TestInstructionsRefuseSymlinksOutAndSpecialFiles(t *testing.T) {
	secretDir := t.TempDir()
	writeFile(t, filepath.Join(secretDir, "credentials"), "aws_secret_access_key = hunter2\n")
	repo := gitRepo(t, map[string]string{"docs/rules.md": "Linked rule.\n", "a/README": "a\n", "b/README": "b\n"})
	if err := os.Symlink(filepath.Join(secretDir, "credentials"), filepath.Join(repo, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(repo, "a", "AGENTS.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := readInstructions(instructionPaths(filepath.Join(repo, "a")))
	if len(in.files) != 0 || in.text != "" {
		t.Fatalf("read %+v:\n%s", in.files, in.text)
	}
	// A symlink inside the repository is fine.
	if err := os.Symlink(filepath.Join(repo, "docs", "rules.md"), filepath.Join(repo, "b", "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	in = readInstructions(instructionPaths(filepath.Join(repo, "b")))
	if len(in.files) != 1 || !strings.Contains(in.text, "Linked rule.") || strings.Contains(in.text, "hunter2") {
		t.Fatalf("read %+v:\n%s", in.files, in.text)
	}
}
