package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/internal/proctest"
	"github.com/loom-lsp/loom-lsp/llm"
)

// editModel reads greet.txt, edits it, then answers.
var editModel = funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
	result, isTool := lastToolResult(req)
	switch {
	case !isTool:
		respond(req, emit, "Reading. ", call("c1", "read_file", `{"path":"greet.txt"}`))
	case strings.Contains(result, "hello"):
		respond(req, emit, "", call("c2", "edit_file", `{"path":"greet.txt","old_string":"hello","new_string":"hello, world"}`))
	default:
		respond(req, emit, "Done: greet.txt now says hello, world.")
	}
})

func TestSessionEditsAndCommitsExactlyTheChangedFile(t *testing.T) {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n", "other.txt": "x\n"})
	// The user's own unrelated changes must survive untouched.
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("user edit\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "untracked.txt"), []byte("mine\n"), 0o644)

	h := newTestHost(t, editModel, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Ask(context.Background(), "make the greeting friendlier")
	if err != nil || turn != 1 {
		t.Fatalf("Ask = %d, %v", turn, err)
	}
	end := h.editor.turnEnded(t, 1)
	if end.Outcome != fsm.TurnDone {
		t.Fatalf("turn ended %s", end.Outcome)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello, world\n" {
		t.Fatalf("greet.txt = %q", got)
	}
	commit := h.editor.waitFor(t, "a commit", func(n Notification) bool { return n.Kind == NoteCommit }).Commit
	if strings.Join(commit.Files, ",") != "greet.txt" {
		t.Fatalf("committed files %v", commit.Files)
	}
	if show := runGit(t, dir, "show", "--name-only", "--format=%s", "HEAD"); !strings.Contains(show, "greet.txt") || strings.Contains(show, "other.txt") {
		t.Fatalf("HEAD commit:\n%s", show)
	}
	status := runGit(t, dir, "status", "--porcelain")
	if !strings.Contains(status, " M other.txt") || !strings.Contains(status, "?? untracked.txt") {
		t.Fatalf("the user's changes were touched:\n%s", status)
	}
	if text := h.editor.text(1); text != "Reading. Done: greet.txt now says hello, world." {
		t.Fatalf("streamed text %q", text)
	}
	msgs, err := s.History(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := fsm.CheckPairing(msgs); err != nil {
		t.Fatal(err)
	}
}

func TestSessionEditOpenDocumentGoesThroughTheEditor(t *testing.T) {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	h := newTestHost(t, editModel, nil)
	path := filepath.Join(dir, "greet.txt")
	h.Overlay().Open(path, 3, "hello\n")
	var applied DocumentEdit
	h.editor.apply = func(d DocumentEdit) error {
		applied = d
		// The editor applies the edit and reports it with a didChange.
		return h.Overlay().Change(d.Path, d.Version+1, []Change{{Text: d.NewText}})
	}
	h.editor.save = func(paths []string) ([]string, error) {
		for _, p := range paths {
			text, _, _ := h.Overlay().Document(p)
			os.WriteFile(p, []byte(text), 0o644)
		}
		return paths, nil
	}
	s, _ := h.AddFolder(dir)
	s.Ask(context.Background(), "greet the world")
	if end := h.editor.turnEnded(t, 1); end.Outcome != fsm.TurnDone {
		t.Fatalf("turn ended %s", end.Outcome)
	}
	if applied.Version != 3 || len(applied.Edits) == 0 {
		t.Fatalf("applied %+v", applied)
	}
	if text, v, _ := h.Overlay().Document(path); text != "hello, world\n" || v != 4 {
		t.Fatalf("overlay %q v%d", text, v)
	}
	h.editor.waitFor(t, "a commit", func(n Notification) bool { return n.Kind == NoteCommit })
}

func TestSessionEditRejectedByTheEditorIsToldToTheModel(t *testing.T) {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	var sawRefusal bool
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		result, isTool := lastToolResult(req)
		switch {
		case !isTool:
			respond(req, emit, "", call("c1", "read_file", `{"path":"greet.txt"}`))
		case strings.Contains(result, "refused"):
			sawRefusal = true
			respond(req, emit, "The file changed; I stopped.")
		default:
			respond(req, emit, "", call("c2", "edit_file", `{"path":"greet.txt","old_string":"hello","new_string":"bye"}`))
		}
	})
	h := newTestHost(t, model, nil)
	path := filepath.Join(dir, "greet.txt")
	h.Overlay().Open(path, 1, "hello\n")
	h.editor.apply = func(d DocumentEdit) error { return ErrEditRejected }
	s, _ := h.AddFolder(dir)
	s.Ask(context.Background(), "edit")
	h.editor.turnEnded(t, 1)
	if !sawRefusal {
		t.Fatal("the model was not told the edit was refused")
	}
	if text, _, _ := h.Overlay().Document(path); text != "hello\n" {
		t.Fatalf("the buffer was clobbered: %q", text)
	}
	if got, _ := os.ReadFile(path); string(got) != "hello\n" {
		t.Fatalf("the disk was written: %q", got)
	}
}

// blockingModel streams one chunk, then waits for cancellation.
var blockingModel = funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
	emit(fsm.LlmTextDelta{Request: req.ID, Text: "thinking"})
	<-ctx.Done()
})

func TestSessionCancelMidStream(t *testing.T) {
	h := newTestHost(t, blockingModel, nil)
	s, _ := h.AddFolder(t.TempDir())
	s.Ask(context.Background(), "think hard")
	h.editor.waitFor(t, "streamed text", func(n Notification) bool { return n.Kind == NoteText })
	start := time.Now()
	if err := s.Cancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	end := h.editor.turnEnded(t, 1)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("cancel took %v, want well under 5 s", elapsed)
	}
	if end.Outcome != fsm.TurnCancelled {
		t.Fatalf("outcome %s", end.Outcome)
	}
	msgs, _ := s.History(context.Background())
	if last := msgs[len(msgs)-1]; last.Role != fsm.RoleAssistant || last.Content != "thinking" {
		t.Fatalf("partial text not kept: %+v", last)
	}
}

func TestSessionCancelMidBashKillsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		if _, isTool := lastToolResult(req); isTool {
			respond(req, emit, "ok")
			return
		}
		respond(req, emit, "", call("b1", "bash", `{"command":"echo $$ > `+pidFile+`; sleep 100 & sleep 100"}`))
	})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, _ := h.AddFolder(t.TempDir())
	s.Ask(context.Background(), "run it")
	h.editor.waitFor(t, "bash running", func(n Notification) bool {
		return n.Kind == NoteTool && n.Tool.Status == fsm.ToolRunning
	})
	var pid int
	deadline := time.Now().Add(5 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(5 * time.Millisecond) // polling a file the child writes
	}
	if pid == 0 {
		t.Fatal("bash never started")
	}
	start := time.Now()
	s.Cancel(context.Background())
	end := h.editor.turnEnded(t, 1)
	if end.Outcome != fsm.TurnCancelled || time.Since(start) > 5*time.Second {
		t.Fatalf("outcome %s after %v", end.Outcome, time.Since(start))
	}
	// The whole process group goes away once the session has let go of
	// the tool run.
	h.Close()
	if alive := proctest.LivingInGroup(pid); len(alive) > 0 {
		t.Fatalf("processes of group %d survived the cancel: %v", pid, alive)
	}
	msgs, _ := s.History(context.Background())
	if err := fsm.CheckPairing(msgs); err != nil {
		t.Fatal(err)
	}
}

func TestSessionRetriesThenSucceeds(t *testing.T) {
	attempts := 0
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		attempts++
		if attempts == 1 {
			emit(fsm.LlmError{Request: req.ID, Kind: fsm.ErrorRateLimited, StatusCode: 429, Retryable: true,
				RetryAfter: 20 * time.Millisecond, Message: "rate limited by the provider"})
			return
		}
		respond(req, emit, "hello")
	})
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(t.TempDir())
	s.Ask(context.Background(), "hi")
	retry := h.editor.waitFor(t, "a retry", func(n Notification) bool { return n.Kind == NoteRetry })
	if retry.Delay < 20*time.Millisecond || !strings.Contains(retry.Text, "rate limited") || strings.Contains(retry.Text, "retrying") {
		t.Fatalf("retry %+v: want the reason alone in Text", retry)
	}
	if end := h.editor.turnEnded(t, 1); end.Outcome != fsm.TurnDone || h.editor.text(1) != "hello" {
		t.Fatalf("outcome %s text %q", end.Outcome, h.editor.text(1))
	}
}

func TestSessionNoModelSaysHowToConfigureOne(t *testing.T) {
	ed := newRecordingEditor()
	h := NewHost(HostOptions{Editor: ed, Getenv: func(string) string { return "" },
		Config: func(string, []config.Override) (config.Config, error) { return config.Default(), nil }})
	defer h.Close()
	s, _ := h.AddFolder(t.TempDir())
	_, err := s.Ask(context.Background(), "hi")
	if err == nil || !strings.Contains(err.Error(), "base_url") {
		t.Fatalf("Ask without a model: %v", err)
	}
}

func TestSessionBashDeniedByPolicyAndByTheUser(t *testing.T) {
	for _, tc := range []struct {
		name    string
		policy  config.Policy
		approve func(Approval) (bool, error)
		want    string
	}{
		{"deny policy", config.PolicyDeny, nil, "disabled"},
		{"user denies", config.PolicyAsk, func(Approval) (bool, error) { return false, nil }, "denied by the user"},
		{"no way to ask", config.PolicyAsk, nil, "cannot ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			var result string
			model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
				if r, isTool := lastToolResult(req); isTool {
					result = r
					respond(req, emit, "ok")
					return
				}
				respond(req, emit, "", call("b1", "bash", `{"command":"touch `+marker+`"}`))
			})
			h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = tc.policy })
			h.editor.approve = tc.approve
			s, _ := h.AddFolder(t.TempDir())
			s.Ask(context.Background(), "touch")
			h.editor.turnEnded(t, 1)
			if !strings.Contains(result, tc.want) {
				t.Fatalf("tool result %q, want %q", result, tc.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
}
