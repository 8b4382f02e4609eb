package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// turnEndedIn is met once conversation id's turn ended.
func turnEndedIn(id string, turn uint64) func([]fakeeditor.Message) bool {
	return func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			var p TurnEndedParams
			if m.Method == MethodTurnEnded && json.Unmarshal(m.Params, &p) == nil && p.Conversation == id && p.Turn == turn {
				return true
			}
		}
		return false
	}
}

// Through the LSP (the fake editor): two conversations of one folder
// stream at the same time, each notification names its conversation and
// carries only its own text, and each auto-commit holds only the file its
// own conversation wrote. The old conversation stays listed and usable.
func TestTwoConversationsStreamAtOnceWithoutCrossTalk(t *testing.T) {
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		who := "A"
		if strings.Contains(r.LastUser(), "second") {
			who = "B"
		}
		if r.Last().Role == "user" {
			args := fmt.Sprintf(`{"path":"%s.txt","content":"written by %s\n"}`, strings.ToLower(who), who)
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("w"+who, "write_file", args)}}
		}
		chunks := make([]string, 12)
		for i := range chunks {
			chunks[i] = fmt.Sprintf("%s%d ", who, i)
		}
		return llmtest.Reply{Text: chunks, Pace: 15 * time.Millisecond}
	})
	dir := gittest.Repo(t, map[string]string{"README": "x\n"})
	opts := modelServerOptions(srv)
	opts["hooks"] = map[string]any{"auto_commit": true}
	cfg := loomClient
	cfg.Folders = []string{dir}
	e := newEnv(t, envOptions{cfg: cfg, options: opts})

	first := e.ask("first conversation")
	var second ConversationItem
	if err := e.ed.ExecuteCommand(e.ctx, CmdNewConversation, FolderArgs{}, &second); err != nil {
		t.Fatal(err)
	}
	if second.ID == "" || second.ID == first.Conversation {
		t.Fatalf("new conversation %+v beside %q", second, first.Conversation)
	}
	var other AskResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "second conversation", Conversation: second.ID}, &other); err != nil {
		t.Fatal(err)
	}
	if other.Conversation != second.ID {
		t.Fatalf("loom.ask ran in %q, want %q", other.Conversation, second.ID)
	}
	e.await("the first conversation's turn", turnEndedIn(first.Conversation, first.Turn))
	e.await("the second conversation's turn", turnEndedIn(second.ID, other.Turn))

	texts := map[string]string{}
	var order []string
	for _, m := range e.ed.Messages("") {
		if m.Method != MethodDisplayMessage {
			continue
		}
		var p DisplayMessageParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		texts[p.Conversation] += p.Text
		order = append(order, p.Conversation)
	}
	for id, who := range map[string]string{first.Conversation: "A", second.ID: "B"} {
		got := texts[id]
		if !strings.HasPrefix(got, who+"0 ") || !strings.Contains(got, who+"11 ") || strings.ContainsAny(got, strings.Replace("AB", who, "", 1)) {
			t.Errorf("conversation %s (%s) streamed %q", id, who, got)
		}
	}
	// The streams overlapped: the second began before the first ended.
	firstEnd, secondStart := -1, -1
	for i, id := range order {
		if id == first.Conversation {
			firstEnd = i
		}
		if id == second.ID && secondStart < 0 {
			secondStart = i
		}
	}
	if secondStart < 0 || secondStart > firstEnd {
		t.Errorf("the two streams did not run at once: order %v", order)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		log := gittest.Run(t, dir, "log", "--format=%s", "--", f)
		if n := strings.Count(log, "loom:"); n != 1 {
			t.Errorf("%s is in %d commits, want 1:\n%s", f, n, log)
		}
	}
	for _, sha := range strings.Fields(gittest.Run(t, dir, "log", "--format=%H", "-2")) {
		files := strings.Fields(gittest.Run(t, dir, "show", "--format=", "--name-only", sha))
		if len(files) != 1 {
			t.Errorf("commit %s holds %v, want its conversation's one file", sha, files)
		}
	}

	var list []ConversationItem
	if err := e.ed.ExecuteCommand(e.ctx, CmdConversations, FolderArgs{}, &list); err != nil {
		t.Fatal(err)
	}
	byID := map[string]ConversationItem{}
	for _, c := range list {
		byID[c.ID] = c
	}
	if c := byID[first.Conversation]; len(list) != 2 || c.Title != "first conversation" || !c.Live || c.Turns != 1 || byID[second.ID].Title != "second conversation" {
		t.Fatalf("loom.conversations = %+v", list)
	}
	// An old client, sending no id, works on the most recent: the second.
	var st struct {
		ConversationID string `json:"conversationId"`
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil || st.ConversationID != second.ID {
		t.Fatalf("loom.status without an id: %+v, %v; want the second conversation", st, err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdOpenConversation, ConversationArgs{ID: "loom-nosuch"}, nil); err == nil {
		t.Fatal("opening an unknown conversation succeeded")
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdRenameConversation, ConversationArgs{ID: first.Conversation, Title: "renamed"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdDeleteConversation, ConversationArgs{ID: second.ID}, nil); err != nil {
		t.Fatal(err)
	}
	list = nil
	if err := e.ed.ExecuteCommand(e.ctx, CmdConversations, FolderArgs{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Title != "renamed" {
		t.Fatalf("after rename and delete: %+v", list)
	}
}
