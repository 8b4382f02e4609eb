package workspace

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// A model that reuses a call id in a later response of the same turn
// (s0, then s0 again) starts two children with ids of their own: each
// journals apart and replays to the answer the parent got from it.
func TestSubagentReusedCallIDJournalsApart(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		task := childTask(req)
		res, isResult := lastToolResult(req)
		switch {
		case task == "" && !isResult:
			respond(req, emit, "", agentCall("s0", "researcher", "first task"))
		case task == "" && strings.Contains(res, "answer one"):
			respond(req, emit, "", agentCall("s0", "researcher", "second task"))
		case task == "":
			respond(req, emit, "parent done")
		case task == "first task":
			respond(req, emit, "answer one")
		default:
			respond(req, emit, "answer two")
		}
	})
	h := newTestHost(t, model, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Ask(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.turnEndedIn(t, s.ID(), turn)
	checkReplays(t, s)
	var path string
	if err := s.loop.call(context.Background(), func() { path = s.ident.journal() }); err != nil {
		t.Fatal(err)
	}
	children, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "subagents", "*.jsonl"))
	var names []string
	for _, c := range children {
		names = append(names, strings.TrimPrefix(filepath.Base(c), strings.TrimSuffix(filepath.Base(path), ".jsonl")))
	}
	sort.Strings(names)
	if strings.Join(names, " ") != ".1-s0.2.jsonl .1-s0.jsonl" {
		t.Fatalf("child journals %q, want .1-s0.jsonl and .1-s0.2.jsonl", names)
	}
}
