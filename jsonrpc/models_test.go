package jsonrpc

import (
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// OpenAI's GET /v1/models answer (shape from the OpenAI API reference),
// and Ollama's GET /api/tags (from Ollama's docs/api.md).
const (
	openAIModels = `{"object":"list","data":[{"id":"qwen2.5-coder","object":"model","created":1686935002,"owned_by":"organization-owner"},{"id":"big-coder","object":"model","created":1686935002,"owned_by":"organization-owner"}]}`
	ollamaTags   = `{"models":[{"name":"deepseek-r1:latest","model":"deepseek-r1:latest","modified_at":"2025-05-10T08:06:48.639712648-07:00","size":4683075271,"digest":"0a8c266910232fd3291e71e5ba1e058cc5af9d411192cf88b6d30e92b6e73163","details":{"parent_model":"","format":"gguf","family":"qwen2","families":["qwen2"],"parameter_size":"7.6B","quantization_level":"Q4_K_M"}},{"name":"llama3.2:latest","model":"llama3.2:latest","modified_at":"2025-05-04T17:37:44.706015396-07:00","size":2019393189,"digest":"a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72","details":{"parent_model":"","format":"gguf","family":"llama","families":["llama"],"parameter_size":"3.2B","quantization_level":"Q4_K_M"}}]}`
)

// loom.models lists the server's models; loom.setModel switches the
// conversation to one, and the next request asks it.
func TestModelsAndSetModel(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"ok"}} })
	srv.Handle("/v1/models", openAIModels)
	e := newEnv(t, envOptions{cfg: loomClient, options: modelServerOptions(srv)})
	var list ModelsWire
	if err := e.ed.ExecuteCommand(e.ctx, CmdModels, ModelArgs{}, &list); err != nil {
		t.Fatal(err)
	}
	// The configured model (which this server does not list) comes first.
	if got := ids(list.Models); got != list.Current+",big-coder,qwen2.5-coder" || list.Error != "" {
		t.Fatalf("models %s (error %q), want the current one and the server's two", got, list.Error)
	}
	configured := list.Current
	e.ask("first")
	e.await("turn 1 ended", turnEnded(e.folder, 0))
	var set SetModelResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdSetModel, ModelArgs{Model: "big-coder"}, &set); err != nil {
		t.Fatal(err)
	}
	if set.Model != "big-coder" {
		t.Errorf("setModel answered %q", set.Model)
	}
	from := len(e.ed.Messages(""))
	e.ask("second")
	e.await("turn 2 ended", turnEnded(e.folder, from))
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Model != configured || reqs[1].Model != "big-coder" {
		t.Fatalf("requests asked %v, want %s then big-coder", models(reqs), configured)
	}
	var st struct {
		Model string `json:"model"`
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil || st.Model != "big-coder" {
		t.Errorf("loom.status model %q (%v), want big-coder", st.Model, err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdSetModel, ModelArgs{Model: "a\nb"}, nil); err == nil {
		t.Error("a model name with a newline was accepted")
	}
	// loom.setModel {} names no model: invalid, not a silent reset.
	err := e.ed.ExecuteCommand(e.ctx, CmdSetModel, ModelArgs{}, nil)
	if err == nil || !strings.Contains(err.Error(), "model is required") {
		t.Errorf("loom.setModel {}: %v, want invalid params", err)
	}
	// A model the server does not list is refused, naming those it does.
	err = e.ed.ExecuteCommand(e.ctx, CmdSetModel, ModelArgs{Model: "gpt-nonexistent"}, nil)
	if err == nil || !strings.Contains(err.Error(), `does not list "gpt-nonexistent"; its models:`) || !strings.Contains(err.Error(), "big-coder") {
		t.Errorf("loom.setModel of an unlisted model: %v, want refused", err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil || st.Model != "big-coder" {
		t.Errorf("after the refusals loom.status model %q (%v), want still big-coder", st.Model, err)
	}
	// "" switches back to model.name.
	if err := e.ed.ExecuteCommand(e.ctx, CmdSetModel, map[string]string{"model": ""}, &set); err != nil || set.Model != configured {
		t.Errorf("loom.setModel \"\": %q (%v), want %s", set.Model, err, configured)
	}
}

// An Ollama server is listed through /api/tags when /v1/models fails.
func TestModelsOllamaTags(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"ok"}} })
	srv.Handle("/api/tags", ollamaTags)
	e := newEnv(t, envOptions{cfg: loomClient, options: modelServerOptions(srv)})
	var list ModelsWire
	if err := e.ed.ExecuteCommand(e.ctx, CmdModels, ModelArgs{}, &list); err != nil {
		t.Fatal(err)
	}
	if got := ids(list.Models); !strings.Contains(got, "deepseek-r1:latest,llama3.2:latest") || list.Error != "" {
		t.Fatalf("models %s (error %q), want Ollama's tags", got, list.Error)
	}
}

// A server that lists nothing still gives the current model, and says why.
func TestModelsUnlisted(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"ok"}} })
	e := newEnv(t, envOptions{cfg: loomClient, options: modelServerOptions(srv)})
	var list ModelsWire
	if err := e.ed.ExecuteCommand(e.ctx, CmdModels, ModelArgs{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Models) != 1 || list.Models[0].ID != list.Current || !strings.Contains(list.Error, "404") {
		t.Fatalf("models %+v error %q, want the current one and the server's 404", list.Models, list.Error)
	}
}

func ids(ms []ModelEntry) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return strings.Join(out, ",")
}

func models(reqs []llmtest.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Model)
	}
	return out
}

// loom.setModel and loom.models act on the conversation they name, not on
// the folder's most recent: the model set for the first conversation is
// the one its next request asks, while the second (newer) one keeps the
// configured model.
func TestSetModelPerConversation(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"ok"}} })
	srv.Handle("/v1/models", openAIModels)
	e := newEnv(t, envOptions{cfg: loomClient, options: modelServerOptions(srv)})
	first := e.ask("first")
	e.await("the first turn", turnEndedIn(first.Conversation, first.Turn))
	var second ConversationItem
	if err := e.ed.ExecuteCommand(e.ctx, CmdNewConversation, FolderArgs{}, &second); err != nil {
		t.Fatal(err)
	}
	var list ModelsWire
	if err := e.ed.ExecuteCommand(e.ctx, CmdModels, ModelArgs{Conversation: first.Conversation}, &list); err != nil {
		t.Fatal(err)
	}
	configured := list.Current
	var set SetModelResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdSetModel, ModelArgs{Conversation: first.Conversation, Model: "big-coder"}, &set); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{first.Conversation: "big-coder", second.ID: configured} {
		var l ModelsWire
		if err := e.ed.ExecuteCommand(e.ctx, CmdModels, ModelArgs{Conversation: id}, &l); err != nil {
			t.Fatal(err)
		}
		if l.Current != want {
			t.Errorf("loom.models of %s: current %q, want %q", id, l.Current, want)
		}
	}
	var b AskResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "in the second", Conversation: second.ID}, &b); err != nil {
		t.Fatal(err)
	}
	e.await("the second conversation's turn", turnEndedIn(second.ID, b.Turn))
	var a AskResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "in the first again", Conversation: first.Conversation}, &a); err != nil {
		t.Fatal(err)
	}
	e.await("the first conversation's second turn", turnEndedIn(first.Conversation, a.Turn))
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Model != configured || reqs[1].Model != configured || reqs[2].Model != "big-coder" {
		t.Fatalf("requests asked %v, want %s, %s (second conversation), then big-coder (first)", models(reqs), configured, configured)
	}
}
