package jsonrpc

import (
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// TestPanelStateIsEverythingInOne: loom.panelState answers in one
// request what a panel draws: the list, the conversation asked for (or
// the folder's most recent when it is unknown), its status, history,
// proposals and commands' changes.
func TestPanelStateIsEverythingInOne(t *testing.T) {
	e := newEnv(t, envOptions{script: "[[step]]\ntext = [\"hello there\"]\n", cfg: fakeeditor.Config{Loom: true}})
	from := len(e.ed.Messages(""))
	e.ask("say hello")
	e.await("turn ended", turnEnded(e.folder, from))
	for _, asked := range []string{"", "loom-no-such-conversation"} {
		var st PanelStateResult
		if err := e.ed.ExecuteCommand(e.ctx, CmdPanelState, FolderArgs{Conversation: asked}, &st); err != nil {
			t.Fatalf("loom.panelState %q: %v", asked, err)
		}
		if st.Folder != e.folder || st.Conversation == "" || st.Status == nil || st.Status.ConversationID != st.Conversation {
			t.Fatalf("panel state for %q: folder %q conversation %q status %+v", asked, st.Folder, st.Conversation, st.Status)
		}
		if len(st.Conversations) != 1 || st.Conversations[0].ID != st.Conversation {
			t.Fatalf("conversations %+v, want the one drawn", st.Conversations)
		}
		if st.History == nil || len(st.History.Messages) < 2 || st.History.Messages[len(st.History.Messages)-1].Content != "hello there" {
			t.Fatalf("history %+v", st.History)
		}
		if st.Proposals == nil || st.CommandChanges == nil || len(st.Proposals) != 0 {
			t.Fatalf("proposals %v, command changes %v: want empty lists", st.Proposals, st.CommandChanges)
		}
	}
}
