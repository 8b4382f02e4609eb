package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// A stream that ignores its cancellation must not leak into the new
// conversation after loom.reset; turn ids go on increasing.
func TestLateStreamAfterResetIsDropped(t *testing.T) {
	entered, release, oldDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	calls := 0
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		calls++
		if calls == 1 {
			close(entered)
			<-release // deaf to ctx, like a slow or careless provider
			emit(fsm.LlmTextDelta{Request: req.ID, Text: "OLD CONVERSATION TEXT"})
			emit(fsm.LlmCompleted{Request: req.ID})
			close(oldDone)
			return
		}
		close(release)
		<-oldDone
		respond(req, emit, "new answer")
	})
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(t.TempDir())
	s.Ask(context.Background(), "first")
	<-entered
	if err := s.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	turn, err := s.Ask(context.Background(), "second")
	if err != nil || turn != 2 {
		t.Fatalf("Ask after reset = %d, %v", turn, err)
	}
	h.editor.waitFor(t, "the new turn's answer", func(n Notification) bool { return n.Kind == NoteText && n.Text == "new answer" })
	msgs, _ := s.History(context.Background())
	for _, m := range msgs {
		if strings.Contains(m.Content, "OLD") {
			t.Fatalf("the old stream reached the new conversation: %+v", msgs)
		}
	}
}

// A bash batch that never reached the hook (the command timed out) leaves
// no snapshot behind that would make a later batch commit a file the user
// changed meanwhile.
func TestUserChangeBetweenBatchesIsNotCommitted(t *testing.T) {
	dir := gitRepo(t, map[string]string{"user.txt": "mine\n"})
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		result, isTool := lastToolResult(req)
		switch {
		case !isTool:
			respond(req, emit, "", call("b1", "bash", `{"command":"sleep 30","timeout":1}`))
		case strings.Contains(result, "timed out"):
			// The user saves a file while the model thinks.
			os.WriteFile(filepath.Join(dir, "user.txt"), []byte("mine, unfinished\n"), 0o644)
			respond(req, emit, "", call("w1", "write_file", `{"path":"new.txt","content":"agent\n"}`))
		default:
			respond(req, emit, "done")
		}
	})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, _ := h.AddFolder(dir)
	s.Ask(context.Background(), "go")
	h.editor.turnEnded(t, 1)
	commit := h.editor.waitFor(t, "a commit", func(n Notification) bool { return n.Kind == NoteCommit }).Commit
	if strings.Join(commit.Files, ",") != "new.txt" {
		t.Fatalf("committed %v, want only new.txt", commit.Files)
	}
	if status := runGit(t, dir, "status", "--porcelain"); !strings.Contains(status, " M user.txt") {
		t.Fatalf("user.txt should still be the user's uncommitted change:\n%s", status)
	}
}

// Two processes (here: two hosts) on one folder do not share a journal:
// the second one starts a conversation of its own, journaled; each lists
// the other's as open elsewhere; neither loses a prompt; and once both
// have stopped, both conversations can be loaded.
func TestSecondHostOnAFolderJournalsItsOwnConversation(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	answer := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) { respond(req, emit, "ok") })
	first := newTestHostIn(t, state, answer, nil)
	s1, _ := first.AddFolder(folder)
	if _, err := s1.Ask(context.Background(), "question a"); err != nil {
		t.Fatal(err)
	}
	first.editor.turnEnded(t, 1)
	second := newTestHostIn(t, state, answer, nil)
	s2, _ := second.AddFolder(folder)
	for i, s := range []*Conversation{s2, s1, s2} {
		if _, err := s.Ask(context.Background(), "question "+string(rune('b'+i))); err != nil {
			t.Fatal(err)
		}
	}
	first.editor.turnEnded(t, 2)
	second.editor.turnEnded(t, 2)
	if s1.ID() == s2.ID() || s2.ID() == "" {
		t.Fatalf("ids %q and %q: want two journaled conversations", s1.ID(), s2.ID())
	}
	for _, h := range []*testHost{first, second} {
		all, err := h.Conversations(folder)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 {
			t.Fatalf("%d conversations listed, want 2: %+v", len(all), all)
		}
		for _, c := range all {
			mine := (h == first && c.ID == s1.ID()) || (h == second && c.ID == s2.ID())
			if c.Live != mine || c.Elsewhere == mine {
				t.Errorf("conversation %s (%q): live %v, elsewhere %v; want live only in its own process", c.ID, c.Title, c.Live, c.Elsewhere)
			}
		}
	}
	f1, _ := first.Folder(folder)
	if _, err := f1.Conversation(s2.ID()); !errors.Is(err, ErrOpenElsewhere) {
		t.Fatalf("opening the other process's conversation: %v, want ErrOpenElsewhere", err)
	}
	id1, id2 := s1.ID(), s2.ID()
	first.Close()
	second.Close()
	third := newTestHostIn(t, state, answer, nil)
	third.AddFolder(folder)
	f, _ := third.Folder(folder)
	want := map[string]string{id1: "question a,question c", id2: "question b,question d"}
	for id, prompts := range want {
		c, err := f.Conversation(id)
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := c.History(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var users []string
		for _, m := range msgs {
			if m.Role == fsm.RoleUser {
				users = append(users, m.Content)
			}
		}
		if strings.Join(users, ",") != prompts {
			t.Fatalf("conversation %s holds %q, want %s", id, users, prompts)
		}
	}
}
