package completion

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/completion/fimtest"
	"github.com/loom-lsp/loom-lsp/config"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Each API's request carries the fields its server documents, and its
// answer is read from where that server puts it.
func TestClientWire(t *testing.T) {
	temp := 0.2
	r := Request{Prefix: "package main\n\nfunc add(a, b int) int {\n\treturn ", Suffix: "\n}\n", Name: "add.go",
		Language: "go", MaxTokens: 64, Temperature: &temp, Stop: []string{"\n"}}
	cases := []struct {
		api, path string
		want      map[string]any
	}{
		{config.CompletionInfill, "/infill", map[string]any{
			"input_prefix": "package main\n\nfunc add(a, b int) int {\n", "prompt": "\treturn ", "input_suffix": "\n}\n",
			"input_extra": []any{}, "n_predict": 64.0, "temperature": 0.2, "stop": []any{"\n"}, "stream": false, "cache_prompt": true}},
		{config.CompletionOpenAI, "/completions", map[string]any{
			"model": "m", "prompt": r.Prefix, "suffix": r.Suffix, "max_tokens": 64.0, "temperature": 0.2, "stop": []any{"\n"}, "stream": false}},
		{config.CompletionOllama, "/api/generate", map[string]any{
			"model": "m", "prompt": r.Prefix, "suffix": r.Suffix, "stream": false,
			"options": map[string]any{"num_predict": 64.0, "temperature": 0.2, "stop": []any{"\n"}}}},
		{config.CompletionMistral, "/v1/fim/completions", map[string]any{
			"model": "m", "prompt": r.Prefix, "suffix": r.Suffix, "max_tokens": 64.0, "temperature": 0.2, "stop": []any{"\n"}, "stream": false}},
	}
	for _, c := range cases {
		t.Run(c.api, func(t *testing.T) {
			srv := fimtest.New()
			defer srv.Close()
			srv.Answer = func(fimtest.Received) string { return "a + b" }
			cl := NewClient(config.Completion{API: c.api, BaseURL: srv.URL + "/", Model: "m"}, "sk-test-123456", nil)
			got, err := cl.Complete(ctxT(t), r)
			if err != nil || got != "a + b" {
				t.Fatalf("Complete = %q, %v", got, err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Path != c.path {
				t.Fatalf("requests = %+v, want one to %s", reqs, c.path)
			}
			if !reflect.DeepEqual(reqs[0].Body, c.want) {
				g, _ := json.Marshal(reqs[0].Body)
				w, _ := json.Marshal(c.want)
				t.Errorf("body\n got %s\nwant %s", g, w)
			}
			if reqs[0].Auth != "Bearer sk-test-123456" {
				t.Errorf("Authorization = %q", reqs[0].Auth)
			}
		})
	}
}

// Where only chat is served, a chat model gets a FIM prompt, and a code
// fence around its answer is dropped.
func TestClientChatFallback(t *testing.T) {
	srv := fimtest.New()
	defer srv.Close()
	srv.Answer = func(fimtest.Received) string { return "```go\na + b\n```" }
	cl := NewClient(config.Completion{API: config.CompletionChat, BaseURL: srv.URL, Model: "chat-m"}, "", nil)
	got, err := cl.Complete(ctxT(t), Request{Prefix: "return ", Suffix: "\n}", Name: "x/add.go", Language: "go", MaxTokens: 32})
	if err != nil || got != "a + b" {
		t.Fatalf("Complete = %q, %v", got, err)
	}
	req := srv.Requests()[0]
	if req.Path != "/chat/completions" || req.Auth != "" {
		t.Fatalf("request %s auth %q", req.Path, req.Auth)
	}
	msgs, _ := req.Body["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages = %v", req.Body["messages"])
	}
	user, _ := msgs[1].(map[string]any)
	if want := "File: x/add.go (go)\n\nreturn <CURSOR>\n}"; user["content"] != want {
		t.Errorf("user message = %q, want %q", user["content"], want)
	}
}

// A server's error is reported with its status, not as an empty
// suggestion.
func TestClientError(t *testing.T) {
	srv := fimtest.New()
	defer srv.Close()
	cl := NewClient(config.Completion{API: config.CompletionOpenAI, BaseURL: srv.URL + "/nowhere", Model: "m"}, "", nil)
	if _, err := cl.Complete(ctxT(t), Request{Prefix: "x", MaxTokens: 1}); err == nil {
		t.Fatal("no error from a 404")
	}
}

// A llama.cpp-like server that closes a kept-alive connection when its
// idle timeout ends races the next request on it: the request is written
// and the connection closes unanswered. The client sends it once more on
// a new connection (Go's transport does not resend a written POST), so
// the keystroke after a pause still gets its suggestion.
func TestClientResendsWhenKeptConnectionWasClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for served := 0; ; served++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if n == 1 && served == 1 {
						return // the idle timeout's close, racing the request: no answer
					}
					body := `{"content":"a + b","stop":true}`
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				}
			}()
		}
	}()
	cl := NewClient(config.Completion{API: config.CompletionInfill, BaseURL: "http://" + ln.Addr().String()}, "", &http.Client{Transport: &http.Transport{}})
	for i := range 2 {
		got, err := cl.Complete(ctxT(t), Request{Prefix: "def add(a, b):\n", Suffix: "\n", MaxTokens: 8})
		if err != nil || got != "a + b" {
			t.Fatalf("request %d = %q, %v; want the answer", i+1, got, err)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("connections = %d, want 2 (the kept one, then a new one for the resend)", n)
	}
}
