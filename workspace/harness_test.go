package workspace

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/llm"
)

// recordingEditor is an Editor that records notifications and answers
// requests by script. Tests wait on its expectations, never on sleeps.
type recordingEditor struct {
	mu      sync.Mutex
	cond    *sync.Cond
	notes   []Notification
	approve func(Approval) (bool, error)
	apply   func(DocumentEdit) error
	save    func([]string) ([]string, error)
}

func newRecordingEditor() *recordingEditor {
	e := &recordingEditor{}
	e.cond = sync.NewCond(&e.mu)
	return e
}

func (e *recordingEditor) Notify(n Notification) {
	e.mu.Lock()
	e.notes = append(e.notes, n)
	e.cond.Broadcast()
	e.mu.Unlock()
}

func (e *recordingEditor) ApplyEdit(ctx context.Context, d DocumentEdit) error {
	if e.apply == nil {
		return ErrUnsupported
	}
	return e.apply(d)
}

func (e *recordingEditor) Approve(ctx context.Context, a Approval) (bool, error) {
	if e.approve == nil {
		return false, ErrUnsupported
	}
	return e.approve(a)
}

func (e *recordingEditor) SaveDocuments(ctx context.Context, paths []string) ([]string, error) {
	if e.save == nil {
		return nil, ErrUnsupported
	}
	return e.save(paths)
}

// testWait bounds a test's wait for what must happen: long, so that a
// loaded machine (CI, -race, other packages' tests beside) does not fail
// a test that only waits; what must not happen is checked otherwise.
const testWait = 90 * time.Second

// waitFor blocks until some notification satisfies ok, or fails the test
// after a deadline. It returns that notification.
func (e *recordingEditor) waitFor(t testing.TB, what string, ok func(Notification) bool) Notification {
	t.Helper()
	deadline := time.Now().Add(testWait)
	timer := time.AfterFunc(testWait, func() { e.mu.Lock(); e.cond.Broadcast(); e.mu.Unlock() })
	defer timer.Stop()
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		for _, n := range e.notes {
			if ok(n) {
				return n
			}
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, n := range e.notes {
				fmt.Fprintf(&b, "  %s turn=%d %q state=%s\n", n.Kind, n.Turn, n.Text, n.State)
			}
			t.Fatalf("timed out waiting for %s; got:\n%s", what, b.String())
		}
		e.cond.Wait()
	}
}

func (e *recordingEditor) turnEnded(t *testing.T, turn uint64) Notification {
	t.Helper()
	return e.waitFor(t, fmt.Sprintf("turn %d to end", turn), func(n Notification) bool {
		return n.Kind == NoteTurnEnded && n.Turn == turn
	})
}

func (e *recordingEditor) text(turn uint64) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, n := range e.notes {
		if n.Kind == NoteText && n.Turn == turn {
			b.WriteString(n.Text)
		}
	}
	return b.String()
}

// funcProvider is a model whose responses a test computes.
type funcProvider func(ctx context.Context, req llm.Request, emit func(fsm.Event))

func (f funcProvider) Stream(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
	f(ctx, req, emit)
}

// respond emits a text answer and/or tool calls for req.
func respond(req llm.Request, emit func(fsm.Event), text string, calls ...fsm.ToolCall) {
	if text != "" {
		emit(fsm.LlmTextDelta{Request: req.ID, Text: text})
	}
	emit(fsm.LlmCompleted{Request: req.ID, ToolCalls: calls})
}

func call(id, name, args string) fsm.ToolCall {
	return fsm.ToolCall{ID: id, Name: name, Arguments: args}
}

// lastToolResult returns the content of the conversation's last message
// when it is a tool result.
func lastToolResult(req llm.Request) (string, bool) {
	last := req.Messages[len(req.Messages)-1]
	return last.Content, last.Role == fsm.RoleTool
}

type testHost struct {
	*Host
	editor *recordingEditor
}

// newTestHost starts a host whose sessions use model and the given
// configuration tweak.
func newTestHost(t testing.TB, model llm.Provider, tweak func(*config.Config)) *testHost {
	t.Helper()
	ed := newRecordingEditor()
	h := NewHost(HostOptions{
		Editor: ed,
		Config: func(folder string, _ []config.Override) (config.Config, error) {
			cfg := config.Default()
			cfg.Model.Name = "test-model"
			cfg.Agent.RetryBase = config.Duration{Duration: time.Millisecond}
			cfg.Agent.RetryMax = config.Duration{Duration: 10 * time.Millisecond}
			if tweak != nil {
				tweak(&cfg)
			}
			return cfg, nil
		},
		Provider: func(config.Config, func(string) string) (llm.Provider, error) { return model, nil },
		StateDir: t.TempDir(),
	})
	t.Cleanup(h.Close)
	return &testHost{Host: h, editor: ed}
}

// gitRepo makes a git repository with one commit holding files.
func gitRepo(t testing.TB, files map[string]string) string { return gittest.Repo(t, files) }

func runGit(t *testing.T, dir string, args ...string) string { return gittest.Run(t, dir, args...) }
