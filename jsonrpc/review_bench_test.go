package jsonrpc

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// reviewBenchScript reads a.txt and proposes to change its line 5, every
// turn.
const reviewBenchScript = `
[[step]]
match.last_role = "user"
repeat = true
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"a.txt","limit":20}'

[[step]]
match.last_tool_result_contains = "line 5"
repeat = true
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"a.txt","old_string":"line 5\n","new_string":"LINE 5\n"}'

[[step]]
match.last_role = "tool"
repeat = true
text = ["ok"]
`

// BenchmarkReviewToBuffer measures the time from loom.review (accept
// all) to the open buffer holding the accepted change, in the fake
// editor: the three-way apply over the buffer's text, the versioned
// workspace/applyEdit round trip and the didChange that confirms it.
// Each iteration first resets the buffer (as the user would, untimed),
// asks for a turn and waits for its proposal (untimed). Run with
// -benchmem; the sub-benchmarks compare a 10-line and a 10,000-line file.
func BenchmarkReviewToBuffer(b *testing.B) {
	for _, lines := range []int{10, 10000} {
		b.Run(fmt.Sprintf("lines=%d", lines), func(b *testing.B) { benchReview(b, lines) })
	}
}

func benchReview(b *testing.B, lines int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	b.Cleanup(cancel)
	folder, _ := filepath.EvalSymlinks(b.TempDir())
	script := filepath.Join(b.TempDir(), "model.toml")
	if err := os.WriteFile(script, []byte(reviewBenchScript), 0o644); err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	base := sb.String()
	want := strings.Replace(base, "line 5\n", "LINE 5\n", 1)
	path := filepath.Join(folder, "a.txt")
	if err := os.WriteFile(path, []byte(base), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := map[string]any{"hooks": map[string]any{"auto_commit": false}, "tools": map[string]any{"edits": "review"},
		"model": map[string]any{"provider": "script", "script": script}}
	serverEnd, clientEnd := net.Pipe()
	s := newServer(Options{Logger: testLogger(b), Host: hostOptions(b)})
	done := make(chan struct{})
	go func() { defer close(done); s.serve(context.Background(), serverEnd) }()
	ed := fakeeditor.Connect(ctx, clientEnd, fakeeditor.Config{Loom: true, Review: true, ApplyEdit: true, Folders: []string{folder}, InitializationOptions: opts})
	b.Cleanup(func() { _ = ed.Close(); <-done })
	if _, err := ed.Initialize(ctx); err != nil {
		b.Fatal(err)
	}
	if err := ed.OpenFile(ctx, path); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		text, _, _ := ed.BufferText(path)
		if text != base {
			end := protocol.Position{Line: uint32(strings.Count(text, "\n"))}
			if err := ed.EditBuffer(ctx, path, protocol.Range{End: end}, base); err != nil {
				b.Fatal(err)
			}
		}
		seen := len(ed.Messages(MethodProposedChanges))
		from := len(ed.Messages(""))
		var res AskResult
		if err := ed.ExecuteCommand(ctx, CmdAsk, AskArgs{Prompt: "change line 5"}, &res); err != nil {
			b.Fatal(err)
		}
		if err := ed.Await(ctx, "a proposal", func(msgs []fakeeditor.Message) bool {
			n := 0
			for _, m := range msgs {
				if m.Method == MethodProposedChanges {
					n++
				}
			}
			return n > seen
		}); err != nil {
			b.Fatal(err)
		}
		var p ProposedChangesParams
		if err := ed.Messages(MethodProposedChanges)[seen].Decode(&p); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		var rr workspace.ReviewResult
		if err := ed.ExecuteCommand(ctx, CmdReview, map[string]any{"id": p.ID, "accept": "all"}, &rr); err != nil {
			b.Fatal(err)
		}
		if text, _, _ := ed.BufferText(path); text != want {
			b.Fatalf("buffer after loom.review is not the accepted change")
		}
		b.StopTimer()
		if err := ed.Await(ctx, "turn end", turnEnded(folder, from)); err != nil {
			b.Fatal(err)
		}
	}
}
