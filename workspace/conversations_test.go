package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// firstPrompt is the first user message of a request.
func firstPrompt(req llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == fsm.RoleUser {
			return m.Content
		}
	}
	return ""
}

// barrier lets n parties through once all n have arrived.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived map[string]bool
	open    chan struct{}
}

func newBarrier(n int) *barrier {
	return &barrier{n: n, arrived: map[string]bool{}, open: make(chan struct{})}
}

func (b *barrier) wait(ctx context.Context, who string) {
	b.mu.Lock()
	if !b.arrived[who] {
		b.arrived[who] = true
		if len(b.arrived) == b.n {
			close(b.open)
		}
	}
	b.mu.Unlock()
	select {
	case <-b.open:
	case <-ctx.Done():
	}
}

// noteOf returns the notifications of conversation id.
func (e *recordingEditor) notesOf(id string) []Notification {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Notification
	for _, n := range e.notes {
		if n.Conversation == id {
			out = append(out, n)
		}
	}
	return out
}

func (e *recordingEditor) turnEndedIn(t testing.TB, id string, turn uint64) Notification {
	t.Helper()
	return e.waitFor(t, fmt.Sprintf("turn %d of %s to end", turn, id), func(n Notification) bool {
		return n.Kind == NoteTurnEnded && n.Turn == turn && n.Conversation == id
	})
}

// editingModel makes each conversation (told apart by its first prompt,
// "edit <file> <old> <new>") read the file, wait at the barrier until
// every conversation has read, then edit it, reading again when the edit
// is refused (or the file is said to have changed on disk: the other
// conversation's edit), and answer "done: <prompt>" once its edit is in.
func editingModel(b *barrier) llm.Provider {
	return funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		prompt := firstPrompt(req)
		f := strings.Fields(prompt)
		file, old, repl := f[1], f[2], f[3]
		last := req.Messages[len(req.Messages)-1]
		id := fmt.Sprintf("c%d", req.ID)
		switch {
		case last.Role == fsm.RoleUser:
			respond(req, emit, "", call(id, "read_file", `{"path":"`+file+`"}`))
		case strings.Contains(last.Content, "tool error") || strings.Contains(last.Content, "read it again"):
			respond(req, emit, "", call(id, "read_file", `{"path":"`+file+`"}`))
		case strings.HasPrefix(previousCall(req), "read_file") && last.Role == fsm.RoleTool && strings.Contains(last.Content, repl):
			// Read again after the other conversation's edit was said to
			// have changed the file: this one's edit is already there.
			respond(req, emit, "done: "+prompt)
		case strings.HasPrefix(previousCall(req), "read_file"):
			b.wait(ctx, prompt)
			args, _ := json.Marshal(map[string]string{"path": file, "old_string": old, "new_string": repl})
			respond(req, emit, "", call(id, "edit_file", string(args)))
		default:
			respond(req, emit, "done: "+prompt)
		}
	})
}

// previousCall names the last tool call of the conversation.
func previousCall(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if calls := req.Messages[i].ToolCalls; len(calls) > 0 {
			return calls[len(calls)-1].Name
		}
	}
	return ""
}

// Two conversations of one folder run their turns at the same time and
// edit the same file: no notification of one reaches the other, and each
// commit holds exactly its own conversation's bytes.
func TestTwoConversationsRunAtOnceAndCommitOnlyTheirOwnBytes(t *testing.T) {
	lines := make([]string, 12)
	for i := range lines {
		lines[i] = fmt.Sprintf("line-%c", 'a'+i)
	}
	dir := gitRepo(t, map[string]string{"a.txt": strings.Join(lines, "\n") + "\n", "b.txt": "bee\n"})
	h := newTestHost(t, editingModel(newBarrier(2)), nil)
	first, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := h.Folder(dir)
	second, err := f.New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := first.Ask(ctx, "edit a.txt line-b FIRST-EDIT"); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Ask(ctx, "edit a.txt line-k SECOND-EDIT"); err != nil {
		t.Fatal(err)
	}
	id1, id2 := first.ID(), second.ID()
	if id1 == id2 || id1 == "" || id2 == "" {
		t.Fatalf("ids %q, %q", id1, id2)
	}
	h.editor.turnEndedIn(t, id1, 1)
	h.editor.turnEndedIn(t, id2, 1)

	for id, want := range map[string]string{id1: "done: edit a.txt line-b FIRST-EDIT", id2: "done: edit a.txt line-k SECOND-EDIT"} {
		var text strings.Builder
		for _, n := range h.editor.notesOf(id) {
			if n.Kind == NoteText {
				text.WriteString(n.Text)
			}
			if n.Kind == NoteTurnStarted && !strings.Contains(want, n.Text) {
				t.Errorf("conversation %s was told of the turn %q", id, n.Text)
			}
		}
		if text.String() != want {
			for _, n := range h.editor.notesOf(id) {
				t.Logf("%s %d %q %+v", n.Kind, n.Turn, n.Text, n.Tool)
			}
			t.Errorf("conversation %s streamed %q, want %q", id, text.String(), want)
		}
	}
	// Both edits are on disk, and each is in a commit of its own.
	disk, _ := os.ReadFile(dir + "/a.txt")
	if !strings.Contains(string(disk), "FIRST-EDIT") || !strings.Contains(string(disk), "SECOND-EDIT") {
		t.Fatalf("a.txt:\n%s", disk)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("left uncommitted:\n%s", st)
	}
	for _, sha := range strings.Fields(runGit(t, dir, "log", "--format=%H", "-2")) {
		diff := runGit(t, dir, "show", "--format=%b", "--unified=0", sha)
		added := 0
		for _, l := range strings.Split(diff, "\n") {
			if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
				added++
			}
		}
		mine, theirs := "FIRST-EDIT", "SECOND-EDIT"
		if strings.Contains(diff, "Requested: edit a.txt line-k") {
			mine, theirs = theirs, mine
		}
		if !strings.Contains(diff, "+"+mine) || strings.Contains(diff, theirs) || added != 1 {
			t.Errorf("commit %s holds other bytes than its conversation's (%s):\n%s", sha, mine, diff)
		}
	}
}

// gatedModel streams "thinking" and waits for prompts containing
// "block" until release is closed, then answers; it records every prompt
// it is sent.
type gatedModel struct {
	release chan struct{}
	mu      sync.Mutex
	sent    []string
}

func (m *gatedModel) Stream(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
	last := req.Messages[len(req.Messages)-1].Content
	m.mu.Lock()
	m.sent = append(m.sent, last)
	m.mu.Unlock()
	if strings.Contains(last, "block") {
		emit(fsm.LlmTextDelta{Request: req.ID, Text: "thinking "})
		select {
		case <-m.release:
		case <-ctx.Done():
			return
		}
	}
	respond(req, emit, "answer to "+last)
}

func (m *gatedModel) prompts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.sent...)
}

// Loading a saved conversation while a prompt is queued drops the queued
// prompt: it never reaches the model, and the turn in flight ends.
func TestLoadConversationWithAQueuedPromptNeverSendsIt(t *testing.T) {
	model := &gatedModel{release: make(chan struct{})}
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(t.TempDir())
	ctx := context.Background()
	s.Ask(ctx, "saved conversation")
	h.editor.turnEnded(t, 1)
	saved := s.ID()
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	s.Ask(ctx, "block please")
	h.editor.waitFor(t, "the stream", func(n Notification) bool { return n.Kind == NoteText && n.Text == "thinking " })
	if turn, err := s.Ask(ctx, "queued prompt"); err != nil || turn != 3 {
		t.Fatalf("queued as turn %d, %v", turn, err)
	}
	if err := s.LoadConversation(ctx, saved); err != nil {
		t.Fatal(err)
	}
	end := h.editor.turnEnded(t, 2)
	if end.Outcome != fsm.TurnCancelled {
		t.Fatalf("the turn in flight ended %v, want cancelled", end.Outcome)
	}
	if s.ID() != saved {
		t.Fatalf("live conversation %s, want %s", s.ID(), saved)
	}
	// The next prompt runs after the ids used, in the loaded conversation.
	turn, err := s.Ask(ctx, "after the load")
	if err != nil || turn <= 3 {
		t.Fatalf("Ask after the load: turn %d, %v; want after 3", turn, err)
	}
	h.editor.turnEnded(t, turn)
	for _, p := range model.prompts() {
		if p == "queued prompt" {
			t.Fatalf("the queued prompt was sent to the model: %q", model.prompts())
		}
	}
	if got := transcript(t, s); !strings.Contains(got, "saved conversation") || strings.Contains(got, "block") {
		t.Fatalf("loaded transcript:\n%s", got)
	}
}

// Opening a conversation, new or saved, while another streams leaves the
// other running: its answer arrives whole.
func TestOpeningAConversationLeavesTheOtherRunning(t *testing.T) {
	model := &gatedModel{release: make(chan struct{})}
	h := newTestHost(t, model, nil)
	dir := t.TempDir()
	s, _ := h.AddFolder(dir)
	f, _ := h.Folder(dir)
	ctx := context.Background()
	s.Ask(ctx, "older")
	h.editor.turnEnded(t, 1)
	older := s.ID()
	s.Reset(ctx)
	running := s.ID()
	s.Ask(ctx, "block the stream")
	h.editor.waitFor(t, "the stream", func(n Notification) bool { return n.Kind == NoteText && n.Conversation == running })
	fresh, err := f.New()
	if err != nil {
		t.Fatal(err)
	}
	reopened, err := f.Conversation(older)
	if err != nil || reopened == s || reopened.ID() != older {
		t.Fatalf("opening the older conversation: %v", err)
	}
	if _, err := fresh.Ask(ctx, "a question meanwhile"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEndedIn(t, fresh.ID(), 1)
	if st, _ := s.Status(ctx); st.State != fsm.CallingLlm.String() {
		t.Fatalf("the streaming conversation is %s, want still CallingLlm", st.State)
	}
	close(model.release)
	end := h.editor.turnEndedIn(t, running, 2)
	if end.Outcome != fsm.TurnDone {
		t.Fatalf("the running turn ended %v", end.Outcome)
	}
	if got := transcript(t, s); !strings.Contains(got, "thinking answer to block the stream") {
		t.Fatalf("transcript:\n%s", got)
	}
	if len(f.Open()) != 3 {
		t.Fatalf("%d conversations open, want 3", len(f.Open()))
	}
}

// Rename, list, delete: the list shows titles, turns and which is open;
// a deleted conversation leaves the list and its journal goes to the
// trash.
func TestRenameListAndDeleteConversations(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	h := newTestHostIn(t, state, &gatedModel{release: make(chan struct{})}, nil)
	s, _ := h.AddFolder(dir)
	f, _ := h.Folder(dir)
	ctx := context.Background()
	s.Ask(ctx, "first question\nwith a second line")
	h.editor.turnEnded(t, 1)
	other, _ := f.New()
	other.Ask(ctx, "other question")
	h.editor.turnEndedIn(t, other.ID(), 1)
	if err := f.Rename(ctx, other.ID(), "  Named by me "); err != nil {
		t.Fatal(err)
	}
	all, err := h.Conversations(dir)
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, c := range all {
		titles[c.ID] = c.Title
		if !c.Live || c.Turns != 1 {
			t.Errorf("%s: live %v, turns %d; want live, 1 turn", c.ID, c.Live, c.Turns)
		}
	}
	if titles[s.ID()] != "first question" || titles[other.ID()] != "Named by me" || all[0].ID != other.ID() {
		t.Fatalf("list %+v", all)
	}
	if err := f.Delete(other.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Ask(ctx, "after delete"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ask on a deleted conversation: %v, want ErrClosed", err)
	}
	all, _ = h.Conversations(dir)
	if len(all) != 1 || all[0].ID != s.ID() {
		t.Fatalf("after delete: %+v", all)
	}
	trash, _ := os.ReadDir(state + "/" + trashDir)
	if len(trash) == 0 {
		t.Fatal("the deleted journal is not in the trash")
	}
	if _, err := f.Conversation(other.ID()); !errors.Is(err, ErrUnknownConversation) {
		t.Fatalf("opening a deleted conversation: %v", err)
	}
}

// Interleaved turns of several conversations on one folder, with resets
// and new conversations among them, keep each conversation's journal
// replay equal to its live state.
func TestRapidConversationsJournalsReplayTheirLiveState(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		state, dir := t.TempDir(), t.TempDir()
		model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
			last := req.Messages[len(req.Messages)-1]
			if last.Role == fsm.RoleUser && strings.Contains(last.Content, "tool") {
				respond(req, emit, "reading", call(fmt.Sprintf("c%d", req.ID), "read_file", `{"path":"missing.txt"}`))
				return
			}
			respond(req, emit, "answer to "+last.Content)
		})
		h := newTestHostIn(t, state, model, func(c *config.Config) {})
		defer h.Close()
		first, err := h.AddFolder(dir)
		if err != nil {
			rt.Fatal(err)
		}
		f, _ := h.Folder(dir)
		convs := []*Conversation{first}
		turns := map[*Conversation]uint64{}
		ctx := context.Background()
		steps := rapid.IntRange(1, 12).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op == 0 && len(convs) < 4:
				c, err := f.New()
				if err != nil {
					rt.Fatal(err)
				}
				convs = append(convs, c)
			case op == 1:
				c := convs[rapid.IntRange(0, len(convs)-1).Draw(rt, "reset")]
				if err := c.Reset(ctx); err != nil {
					rt.Fatal(err)
				}
			default:
				// Several conversations ask at once, then all turns end.
				n := rapid.IntRange(1, len(convs)).Draw(rt, "askers")
				var asked []*Conversation
				for _, c := range convs[:n] {
					prompt := fmt.Sprintf("prompt %d", i)
					if rapid.Bool().Draw(rt, "tool") {
						prompt += " tool"
					}
					turn, err := c.Ask(ctx, prompt)
					if err != nil {
						rt.Fatal(err)
					}
					turns[c] = turn
					asked = append(asked, c)
				}
				for _, c := range asked {
					h.editor.turnEndedIn(t, c.ID(), turns[c])
				}
			}
		}
		for _, c := range convs {
			var path string
			var live []fsm.Message
			var cfg fsm.Config
			if err := c.loop.call(ctx, func() {
				path = c.ident.journal()
				live = append([]fsm.Message(nil), c.m.Messages()...)
				cfg = c.machineConfig()
				c.jr.sync()
			}); err != nil {
				rt.Fatal(err)
			}
			rp, err := journal.Replay(path, cfg)
			if err != nil {
				rt.Fatal(err)
			}
			if !reflect.DeepEqual(rp.M.Messages(), live) {
				rt.Fatalf("conversation %s: replay\n%+v\nlive\n%+v", c.ID(), rp.M.Messages(), live)
			}
		}
	})
}
