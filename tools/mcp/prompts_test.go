package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/tools"
)

// The real server-everything's prompts become slash commands: listed with
// their arguments, expanded through prompts/get (positional and
// name=value), a missing required argument named; its resources are
// read by the model through ev__read_resource, whose description lists
// them.
func TestEverythingPromptsAndResources(t *testing.T) {
	m := newManager(t, everything(t, "ev"))
	waitUntil(t, m, "the prompts", func() bool { return len(m.Prompts()) > 0 })
	var args *Prompt
	for _, p := range m.Prompts() {
		if p.Command == "mcp.ev.args-prompt" {
			args = &p
		}
	}
	if args == nil || args.Hint() != "city [state]" {
		t.Fatalf("prompts = %+v, want mcp.ev.args-prompt with hint \"city [state]\"", m.Prompts())
	}
	ctx := context.Background()
	for in, want := range map[string]string{
		"/mcp.ev.args-prompt Paris":                  "What's weather in Paris?",
		"/mcp.ev.args-prompt Portland Oregon":        "What's weather in Portland, Oregon?",
		"/mcp.ev.args-prompt state=Maine city=Paris": "What's weather in Paris, Maine?",
	} {
		got, ok, err := m.ExpandPrompt(ctx, in)
		if !ok || err != nil || got != want {
			t.Errorf("ExpandPrompt(%q) = %q, %v, %v; want %q", in, got, ok, err, want)
		}
	}
	if _, ok, err := m.ExpandPrompt(ctx, "/mcp.ev.args-prompt"); !ok || err == nil || !strings.Contains(err.Error(), "needs city") {
		t.Errorf("without city: %v, %v", ok, err)
	}
	if _, ok, err := m.ExpandPrompt(ctx, "/mcp.ev.nope"); !ok || err == nil || !strings.Contains(err.Error(), "/mcp.ev.simple-prompt") {
		t.Errorf("unknown prompt: %v, %v", ok, err)
	}
	if _, ok, _ := m.ExpandPrompt(ctx, "/review this"); ok {
		t.Error("a non-MCP slash command was taken")
	}

	rt := toolByName(m, "ev__read_resource")
	if rt == nil || rt.Mutating() || !strings.Contains(rt.Description(), "demo://resource/static/document/") {
		t.Fatalf("read_resource = %+v", rt)
	}
	uri := "demo://resource/static/document/" + strings.SplitN(strings.SplitN(rt.Description(), "demo://resource/static/document/", 2)[1], " ", 2)[0]
	res := run(t, rt, &tools.Env{}, `{"uri":"`+uri+`"}`)
	if res.IsError || !strings.Contains(res.Text, "[resource <"+uri+">") || len(res.Text) < 100 {
		t.Errorf("read %s = %q", uri, res.Text)
	}
	if st := m.Status(); st[0].Prompts < 4 || st[0].Resources == 0 {
		t.Errorf("status = %+v, want prompts and resources counted", st)
	}
}
