package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// A conversation's error goes out as window/showMessage naming that
// conversation (params.loom), so a client showing another conversation
// draws it where it belongs, not in the one it shows.
func TestShowMessageNamesItsConversation(t *testing.T) {
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.LastUser(), "fail") {
			return llmtest.Reply{Status: 400, ErrorBody: `{"error":{"message":"bad request for this one","type":"invalid_request_error"}}`}
		}
		return llmtest.Reply{Text: []string{"ok"}}
	})
	e := newEnv(t, envOptions{cfg: loomClient, options: modelServerOptions(srv)})
	first := e.ask("this one will fail")
	var second ConversationItem
	if err := e.ed.ExecuteCommand(e.ctx, CmdNewConversation, FolderArgs{}, &second); err != nil {
		t.Fatal(err)
	}
	var b AskResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "this one works", Conversation: second.ID}, &b); err != nil {
		t.Fatal(err)
	}
	e.await("both turns", func(msgs []fakeeditor.Message) bool {
		return turnEndedIn(first.Conversation, first.Turn)(msgs) && turnEndedIn(second.ID, b.Turn)(msgs)
	})
	var errs []ShowMessageParams
	for _, m := range e.ed.Messages("") {
		var p ShowMessageParams
		if m.Method == protocol.MethodWindowShowMessage && json.Unmarshal(m.Params, &p) == nil && p.Type == protocol.MessageTypeError {
			errs = append(errs, p)
		}
	}
	if len(errs) == 0 {
		t.Fatal("no error shown")
	}
	for _, p := range errs {
		if p.Loom.Conversation != first.Conversation || p.Loom.Folder != e.folder {
			t.Errorf("error %q names %+v, want conversation %s of %s", p.Message, p.Loom, first.Conversation, e.folder)
		}
	}
}
