package workspace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// lockedBuffer is a log destination that tests read after the host stops.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A key the model streams in pieces, with events in between (a file
// change, a queued prompt, the fragments of a tool call's arguments that
// echo the key too): the streamed text shown, the tool call and the
// approval shown and the log never show it; the journal keeps the model's
// own text exactly (what it continues from after a resume) and shows the
// key nowhere else.
func TestSplitKeyAcrossInterleavedEvents(t *testing.T) {
	const key = "sk-interleaved-0123456789abcdef"
	t.Setenv("OPENAI_API_KEY", key)
	state, folder := t.TempDir(), t.TempDir()
	var s *Conversation
	started := make(chan struct{})
	first := true // requests come one at a time
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		if !first {
			respond(req, emit, "ok")
			return
		}
		first = false
		<-started
		text := func(s string) { emit(fsm.LlmTextDelta{Request: req.ID, Text: s}) }
		args := func(s string) {
			emit(fsm.LlmToolCallDelta{Request: req.ID, Index: 0, ID: "c1", Name: "bash", ArgumentsDelta: s})
		}
		text("the key is " + key[:7])
		s.loop.postEvent(fsm.FilesChanged{Paths: []string{folder + "/a.txt"}}) // in order: the same inbox
		text(key[7:12])
		s.loop.postEvent(fsm.UserInput{Text: "a queued prompt"})
		args(`{"command":"echo ` + key[:10])
		text(key[12:20])
		args(key[10:] + `"}`)
		text(key[20:] + ", see")
		emit(fsm.LlmCompleted{Request: req.ID, ToolCalls: []fsm.ToolCall{call("c1", "bash", `{"command":"echo `+key+`"}`)}})
	})
	var approvals []Approval
	log := &lockedBuffer{}
	ed := newRecordingEditor()
	ed.approve = func(a Approval) (bool, error) {
		approvals = append(approvals, a)
		return false, nil
	}
	h := NewHost(HostOptions{
		Editor: ed,
		Config: func(string, []config.Override) (config.Config, error) {
			cfg := config.Default()
			cfg.Model.Name = "test-model"
			cfg.Tools.Bash = config.PolicyAsk
			return cfg, nil
		},
		Provider: func(config.Config, func(string) string) (llm.Provider, error) { return model, nil },
		StateDir: state,
		Logger:   slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	t.Cleanup(h.Close)
	s, _ = h.AddFolder(folder)
	if _, err := s.Ask(context.Background(), "echo the key"); err != nil {
		t.Fatal(err)
	}
	close(started)
	ed.turnEnded(t, 1)
	ed.turnEnded(t, 2) // the queued prompt
	h.Close()

	const want = "the key is [REDACTED], see"
	if got := ed.text(1); got != want+"ok" {
		t.Errorf("text shown: %q, want %q", got, want+"ok")
	}
	ed.mu.Lock()
	for _, n := range ed.notes {
		if b, _ := json.Marshal(n); bytes.Contains(b, []byte(key)) {
			t.Errorf("a %s notification shows the key: %s", n.Kind, b)
		}
	}
	ed.mu.Unlock()
	if len(approvals) != 1 || approvals[0].Detail != "echo [REDACTED]" {
		t.Errorf("approvals asked: %+v, want one for %q", approvals, "echo [REDACTED]")
	}
	if strings.Contains(log.String(), key) {
		t.Errorf("the log shows the key:\n%s", log.String())
	}
	b, err := os.ReadFile(journal.Path(state, s.folder.Path()))
	if err != nil {
		t.Fatal(err)
	}
	// The journal keeps what the model wrote exactly (its text and its
	// tool call: the conversation it continues after a resume), and
	// nothing else shows the key.
	var journaled strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var rec journal.Record
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		if !journal.ModelWritten(rec.Type) && (bytes.Contains(sc.Bytes(), []byte(key[:10])) || bytes.Contains(sc.Bytes(), []byte(key[10:]))) {
			t.Errorf("a %s record of the journal shows the key, or part of it: %s", rec.Type, sc.Bytes())
		}
		if rec.Type != "LlmTextDelta" {
			continue
		}
		var d fsm.LlmTextDelta
		if err := json.Unmarshal(rec.Event, &d); err != nil {
			t.Fatal(err)
		}
		journaled.WriteString(d.Text + "|")
	}
	if got, wrote := journaled.String(), "the key is "+key+", see"; strings.ReplaceAll(got, "|", "") != wrote+"okok" || strings.Count(got, "|") < 4 {
		t.Errorf("journaled text records %q, want %q exactly, in more than two records (the events between cut it)", got, wrote)
	}
}

// The Editor is the front end's own, not a wrapper: its optional
// interfaces stay visible to the sessions.
func TestSessionsSeeTheEditorsOwnInterfaces(t *testing.T) {
	ed := &storeEditor{recordingEditor: newRecordingEditor()}
	h := NewHost(HostOptions{Editor: ed, StateDir: t.TempDir()})
	t.Cleanup(h.Close)
	if _, ok := h.opts.Editor.(DocumentStore); !ok {
		t.Fatalf("the host's editor %T is no DocumentStore", h.opts.Editor)
	}
}

// storeEditor is an Editor that is also a DocumentStore.
type storeEditor struct{ *recordingEditor }

func (storeEditor) ReadDocument(context.Context, DocumentCaller, string) (string, error) {
	return "", ErrUnsupported
}

func (storeEditor) WriteDocument(context.Context, DocumentCaller, string, string) error {
	return ErrUnsupported
}

// A stale text delta (after a cancel) is logged without its text, which
// may be a fragment of a key that no redaction would recognise.
func TestRejectedDeltaLoggedWithoutItsText(t *testing.T) {
	err := func() error {
		m := fsm.New(fsm.Config{})
		_, err := m.Step(fsm.LlmTextDelta{Request: 7, Text: "sk-frag"})
		return err
	}()
	if err == nil {
		t.Fatal("the machine took a delta of no request")
	}
	got := rejectedForLog(fsm.LlmTextDelta{Request: 7, Text: "sk-frag"}, err)
	if strings.Contains(got, "sk-frag") || !strings.Contains(got, "request 7") {
		t.Errorf("logged %q", got)
	}
}

// BenchmarkNotifyText measures what the notify path costs per streamed
// delta: with no redaction at all (the editor called directly), with no
// key configured (bearer tokens only), and with a key; -benchmem shows
// the allocations.
func BenchmarkNotifyText(b *testing.B) {
	delta := "Here is a typical delta of streamed text, with words. "
	for _, c := range []struct {
		name string
		keys []string
		raw  bool
	}{
		{"no-redaction", nil, true},
		{"no-key", nil, false},
		{"one-key", []string{"sk-bench-0123456789abcdefghijklmnop"}, false},
		{"three-keys", []string{"sk-bench-0123456789abcdefghijklmnop", "sk-ant-api03-bench-key-xyz", "gsk_benchbenchbench0001"}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := secret.NewRedactor(nil)
			for _, k := range c.keys {
				r.Add(k)
			}
			s := &Conversation{folder: &Folder{dir: "/w", host: &Host{redactor: r, opts: HostOptions{Editor: discardEditor{}}}}}
			s.out = out{ed: discardEditor{}, r: r, dir: "/w", id: func() string { return "" }, children: &s.children, shown: newShownTexts(r)}
			n := Notification{Kind: NoteText, Turn: 1, Text: delta}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if c.raw {
					n.Folder = s.folder.dir
					s.folder.host.opts.Editor.Notify(n)
				} else {
					s.out.notify(n)
				}
			}
		})
	}
}

// discardEditor drops every notification.
type discardEditor struct{}

func (discardEditor) Notify(Notification)                             {}
func (discardEditor) ApplyEdit(context.Context, DocumentEdit) error   { return ErrUnsupported }
func (discardEditor) Approve(context.Context, Approval) (bool, error) { return false, ErrUnsupported }
func (discardEditor) SaveDocuments(context.Context, []string) ([]string, error) {
	return nil, ErrUnsupported
}
