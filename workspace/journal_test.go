package workspace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
	"go.uber.org/goleak"
)

// TestMain keeps every host of this package's tests, even one built
// without HostOptions.StateDir, out of the real ~/.local/state, and fails
// the package if any goroutine outlives its tests.
func TestMain(m *testing.M) {
	if os.Getenv("LOOM_TEST_HELPER") == "" {
		dir, err := os.MkdirTemp("", "loom-state-")
		if err != nil {
			panic(err)
		}
		os.Setenv("XDG_STATE_HOME", dir)
		code := m.Run()
		os.RemoveAll(dir)
		if code == 0 {
			if err := goleak.Find(); err != nil {
				fmt.Fprintf(os.Stderr, "goroutines left behind by the tests: %v\n", err)
				code = 1
			}
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// newTestHostIn is newTestHost with a chosen state directory, so that a
// second host can resume the first one's journal.
func newTestHostIn(t *testing.T, stateDir string, model llm.Provider, tweak func(*config.Config)) *testHost {
	t.Helper()
	ed := newRecordingEditor()
	h := NewHost(HostOptions{
		Editor: ed,
		Config: func(folder string, _ []config.Override) (config.Config, error) {
			cfg := config.Default()
			cfg.Model.Name = "test-model"
			if tweak != nil {
				tweak(&cfg)
			}
			return cfg, nil
		},
		Provider: func(config.Config, func(string) string) (llm.Provider, error) { return model, nil },
		StateDir: stateDir,
	})
	t.Cleanup(h.Close)
	return &testHost{Host: h, editor: ed}
}

// textModel answers every request with "answer N" (N counts requests), or
// streams "thinking" and blocks for a prompt containing "block".
func textModel() llm.Provider {
	n := 0
	return funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		n++
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "block") {
			emit(fsm.LlmTextDelta{Request: req.ID, Text: "thinking"})
			<-ctx.Done()
			return
		}
		respond(req, emit, fmt.Sprintf("answer %d", n))
	})
}

func transcript(t *testing.T, s *Conversation) string {
	t.Helper()
	msgs, err := s.History(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := fsm.CheckPairing(msgs); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range msgs {
		if m.Role == fsm.RoleSystem {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
	}
	return b.String()
}

func TestJournalResumesTheConversation(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	h1 := newTestHostIn(t, state, textModel(), nil)
	s1, _ := h1.AddFolder(folder)
	s1.Ask(context.Background(), "first")
	h1.editor.turnEnded(t, 1)
	s1.Ask(context.Background(), "second")
	h1.editor.turnEnded(t, 2)
	want := transcript(t, s1)
	h1.Close()

	h2 := newTestHostIn(t, state, textModel(), nil)
	s2, _ := h2.AddFolder(folder)
	h2.editor.waitFor(t, "the resume note", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, "resumed")
	})
	if got := transcript(t, s2); got != want || !strings.Contains(got, "answer 2") {
		t.Fatalf("resumed transcript:\n%s\nwant:\n%s", got, want)
	}
	// The conversation goes on, numbered after the resumed turns.
	if turn, err := s2.Ask(context.Background(), "third"); err != nil || turn != 3 {
		t.Fatalf("Ask after resume = %d, %v", turn, err)
	}
	h2.editor.turnEnded(t, 3)
}

func TestJournalStoppedMidTurnResumesWaiting(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	h1 := newTestHostIn(t, state, textModel(), nil)
	s1, _ := h1.AddFolder(folder)
	s1.Ask(context.Background(), "done turn")
	h1.editor.turnEnded(t, 1)
	s1.Ask(context.Background(), "block here")
	h1.editor.waitFor(t, "streamed text", func(n Notification) bool { return n.Kind == NoteText && n.Turn == 2 })
	// A shutdown is not journaled: the journal ends mid-turn, as when
	// the daemon is killed.
	h1.Close()
	checkResumedMidTurn(t, state, folder, true)
}

// checkResumedMidTurn resumes the journal of a daemon stopped during turn
// 2 ("block here", after "thinking" was streamed). An orderly stop
// journals the text streamed so far (stopped keeps "thinking").
func checkResumedMidTurn(t *testing.T, state, folder string, stopped bool) {
	t.Helper()
	h2 := newTestHostIn(t, state, textModel(), nil)
	s2, _ := h2.AddFolder(folder)
	end := h2.editor.turnEnded(t, 2)
	if end.Outcome != fsm.TurnCancelled {
		t.Fatalf("the interrupted turn ended %s", end.Outcome)
	}
	st, _ := s2.Status(context.Background())
	if st.State != "WaitingForUserInput" {
		t.Fatalf("state after resume: %s", st.State)
	}
	// The completed message survives; the one still streaming when the
	// daemon was killed is not journaled yet (its deltas are written as
	// one record when it completes).
	want := "user: done turn\nassistant: answer 1\nuser: block here\n"
	if stopped {
		want += "assistant: thinking\n"
	}
	if got := transcript(t, s2); got != want {
		t.Fatalf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if turn, err := s2.Ask(context.Background(), "again"); err != nil || turn != 3 {
		t.Fatalf("Ask = %d, %v", turn, err)
	}
	h2.editor.turnEnded(t, 3)
}

// TestHelperProcess is the daemon killed by TestJournalSurvivesKill9: it
// runs a session until told to stop by SIGKILL.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("LOOM_TEST_HELPER") != "kill9" {
		t.Skip("helper process")
	}
	state, folder := os.Getenv("LOOM_STATE"), os.Getenv("LOOM_FOLDER")
	h := newTestHostIn(t, state, textModel(), nil)
	s, err := h.AddFolder(folder)
	if err != nil {
		t.Fatal(err)
	}
	s.Ask(context.Background(), "done turn")
	h.editor.turnEnded(t, 1)
	s.Ask(context.Background(), "block here")
	h.editor.waitFor(t, "streamed text", func(n Notification) bool { return n.Kind == NoteText && n.Turn == 2 })
	fmt.Println("ready")
	select {} // until killed
}

func TestJournalSurvivesKill9(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LOOM_TEST_HELPER=kill9", "LOOM_STATE="+state, "LOOM_FOLDER="+folder)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("helper said %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the helper daemon never got mid-turn")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	checkResumedMidTurn(t, state, folder, false)
}

func TestJournalTornLastLineIsSkippedAndReported(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	h1 := newTestHostIn(t, state, textModel(), nil)
	s1, _ := h1.AddFolder(folder)
	s1.Ask(context.Background(), "first")
	h1.editor.turnEnded(t, 1)
	want := transcript(t, s1)
	h1.Close()
	path := journal.Path(state, s1.folder.Path())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"t":"UserInput","e":{"Text":"cut sh`)
	f.Close()

	h2 := newTestHostIn(t, state, textModel(), nil)
	s2, _ := h2.AddFolder(folder)
	h2.editor.waitFor(t, "the torn-line note", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, "cut short")
	})
	if got := transcript(t, s2); got != want {
		t.Fatalf("transcript:\n%s\nwant:\n%s", got, want)
	}
	s2.Ask(context.Background(), "second")
	h2.editor.turnEnded(t, 2)
	h2.Close()
	// The torn line was cut off: the journal reads cleanly again.
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte("cut sh")) {
		t.Fatalf("the torn line is still in the journal:\n%s", b)
	}
	h3 := newTestHostIn(t, state, textModel(), nil)
	s3, _ := h3.AddFolder(folder)
	if got := transcript(t, s3); !strings.HasSuffix(got, "user: first\nassistant: answer 1\nuser: second\nassistant: answer 1\n") {
		t.Fatalf("transcript after the third start:\n%s", got)
	}
	h3.editor.mu.Lock()
	defer h3.editor.mu.Unlock()
	for _, n := range h3.editor.notes {
		if n.Kind == NoteInfo && strings.Contains(n.Text, "cut short") {
			t.Fatal("a clean journal was reported torn")
		}
	}
}

func TestJournalOfAnotherVersionIsSetAside(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	canon, _ := filepath.EvalSymlinks(folder)
	path := journal.Path(state, canon)
	old := `{"journal":"loom-lsp","version":99,"folder":"x"}` + "\n" + `{"t":"Whatever"}` + "\n"
	os.WriteFile(path, []byte(old), 0o600)
	h := newTestHostIn(t, state, textModel(), nil)
	s, _ := h.AddFolder(folder)
	h.editor.waitFor(t, "the set-aside note", func(n Notification) bool {
		return n.Kind == NoteError && strings.Contains(n.Text, "version 99")
	})
	asides, _ := filepath.Glob(strings.TrimSuffix(path, ".jsonl") + ".incompatible-*.jsonl")
	if len(asides) != 1 {
		t.Fatalf("set-aside journals: %v", asides)
	}
	if b, _ := os.ReadFile(asides[0]); string(b) != old {
		t.Fatalf("the old journal was changed: %q", b)
	}
	s.Ask(context.Background(), "hi")
	h.editor.turnEnded(t, 1)
}

func TestJournalResetKeepsTheOldJournal(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	h := newTestHostIn(t, state, textModel(), nil)
	s, _ := h.AddFolder(folder)
	s.Ask(context.Background(), "before reset")
	h.editor.turnEnded(t, 1)
	if err := s.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := journal.Path(state, s.folder.Path())
	asides, _ := filepath.Glob(strings.TrimSuffix(path, ".jsonl") + ".reset-*.jsonl")
	if len(asides) != 1 {
		t.Fatalf("kept journals: %v", asides)
	}
	if b, _ := os.ReadFile(asides[0]); !bytes.Contains(b, []byte("before reset")) {
		t.Fatalf("the kept journal lost the conversation:\n%s", b)
	}
	h.Close()
	h2 := newTestHostIn(t, state, textModel(), nil)
	s2, _ := h2.AddFolder(folder)
	if got := transcript(t, s2); got != "" {
		t.Fatalf("a reset conversation came back:\n%s", got)
	}
}

func TestJournalHoldsNoAPIKey(t *testing.T) {
	const secret = "sk-test-7f3c9a1e5b2d4f60"
	t.Setenv("OPENAI_API_KEY", secret)
	t.Setenv("LOOM_CUSTOM_KEY", secret)
	state, folder := t.TempDir(), t.TempDir()
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		if _, isTool := lastToolResult(req); isTool {
			respond(req, emit, "ok")
			return
		}
		respond(req, emit, "", call("b1", "bash", `{"command":"env; echo $OPENAI_API_KEY $LOOM_CUSTOM_KEY"}`))
	})
	h := newTestHostIn(t, state, model, func(c *config.Config) {
		c.Tools.Bash = config.PolicyAllow
		c.Model.APIKeyEnv = "LOOM_CUSTOM_KEY"
	})
	s, _ := h.AddFolder(folder)
	s.Ask(context.Background(), "print the environment")
	h.editor.turnEnded(t, 1)
	h.Close()
	b, err := os.ReadFile(journal.Path(state, s.folder.Path()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("PATH=")) {
		t.Fatalf("the bash output is not in the journal:\n%s", b)
	}
	if bytes.Contains(b, []byte(secret)) {
		t.Fatal("the journal contains the API key")
	}
}

func TestDescribeJournal(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	h := newTestHostIn(t, state, textModel(), nil)
	s, _ := h.AddFolder(folder)
	s.Ask(context.Background(), "hello")
	h.editor.turnEnded(t, 1)
	h.Close()
	f, err := os.Open(journal.Path(state, s.folder.Path()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	if err := journal.Describe(f, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"journal of " + s.folder.Path(),
		`UserInput "hello"`,
		"  SendLlmRequest turn=1 req=1",
		`LlmTextDelta req=1 "answer 1"`,
		"  WaitForInput turn=1 outcome=done",
		"  state: WaitingForUserInput turn=1",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("replay output lacks %q:\n%s", want, out.String())
		}
	}
}
