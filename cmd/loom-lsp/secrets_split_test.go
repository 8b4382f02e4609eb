package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/jsonrpc"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
	"github.com/loom-lsp/loom-lsp/secret"
)

// splitToken is a bearer token the model echoes; it is no configured key,
// so only its "Bearer " shape gets it masked.
const splitToken = "tok_9fQ2-xZ.7/+wLm=="

// splitAnswer is a model answer, in pieces as the model streams them,
// that holds key cut at every byte position between two pieces and at
// every pair of positions between three, and a "Bearer" header cut at
// every position. want is the whole answer as it must be shown: masked.
func splitAnswer(key string) (pieces []string, want string, masks int) {
	add := func(p ...string) { pieces = append(pieces, p...) }
	for i := 1; i < len(key); i++ {
		add(fmt.Sprintf("two at %d: %s", i, key[:i]), key[i:]+".\n")
	}
	for i := 1; i < len(key); i++ {
		for j := i + 1; j < len(key); j++ {
			add(fmt.Sprintf("three at %d,%d: %s", i, j, key[:i]), key[i:j], key[j:]+".\n")
		}
	}
	header := "Authorization: Bearer " + splitToken
	for i := 1; i < len(header); i++ {
		add("header: "+header[:i], header[i:]+" sent.\n")
	}
	r := secret.NewRedactor(nil)
	r.Add(key)
	want = r.String(strings.Join(pieces, ""))
	return pieces, want, strings.Count(want, secret.Mask)
}

// splitServer is an OpenAI-compatible server (real SSE) whose model
// answers every prompt with pieces, after reasoning the same pieces
// (delta.reasoning_content).
func splitServer(t *testing.T, pieces []string) *llmtest.Server {
	return llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Reasoning: pieces, Text: pieces, Usage: &llmtest.Usage{Prompt: 10, Completion: 10}}
	})
}

// leaks reports where text shows the key or the bearer token (or a
// JSON-escaped form of them).
func leaks(text, key string) []string {
	var found []string
	for _, s := range []string{key, splitToken, strings.ReplaceAll(splitToken, "/", `\/`), strings.ReplaceAll(splitToken, "+", `\u002b`)} {
		if i := strings.Index(text, s); i >= 0 {
			found = append(found, fmt.Sprintf("%q at %d: …%s…", s, i, text[max(0, i-40):min(len(text), i+len(s)+20)]))
		}
	}
	return found
}

// checkShown fails the test when what (a front end's text, joined from
// its pieces) shows a secret or is not the masked answer.
func checkShown(t *testing.T, what, got, want, key string) {
	t.Helper()
	for _, l := range leaks(got, key) {
		t.Errorf("%s shows a secret: %s", what, l)
	}
	if got != want {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("%s (%d bytes) differs from the masked answer (%d bytes) at byte %d:\n got …%q…\nwant …%q…", what, len(got), len(want), i,
			got[max(0, i-60):min(len(got), i+60)], want[max(0, i-60):min(len(want), i+60)])
	}
}

// askAndStop asks prompt over LSP, waits for a message that until
// accepts, reads loom.history, then shuts the server down and waits for
// it to exit.
func askAndStop(t *testing.T, ctx context.Context, c *child, ed *fakeeditor.Editor, prompt, what string, until func(fakeeditor.Message) bool) jsonrpc.HistoryResult {
	t.Helper()
	if err := ed.ExecuteCommand(ctx, jsonrpc.CmdAsk, jsonrpc.AskArgs{Prompt: prompt}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ed.Await(ctx, what, func(msgs []fakeeditor.Message) bool {
		return slices.ContainsFunc(msgs, until)
	}); err != nil {
		t.Fatal(err)
	}
	var history jsonrpc.HistoryResult
	if err := ed.ExecuteCommand(ctx, jsonrpc.CmdHistory, jsonrpc.FolderArgs{}, &history); err != nil {
		t.Fatal(err)
	}
	if err := ed.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	ed.Exit(ctx)
	c.wait(t)
	return history
}

// checkJournal fails the test when a journal under dir holds the key,
// or when its text, the sealed key given back, is not exactly what the
// model wrote (the journal keeps the model's own text, bearer token
// included, and seals the keys loom knows: issue 31).
func checkJournal(t *testing.T, dir, key, exact string) {
	t.Helper()
	got := sealMark.ReplaceAllString(journalText(t, dir, key), key)
	if got != exact {
		i := 0
		for i < len(got) && i < len(exact) && got[i] == exact[i] {
			i++
		}
		t.Errorf("the journal's text, unsealed (%d bytes), differs from what the model wrote (%d bytes) at byte %d:\n got …%q…\nwant …%q…", len(got), len(exact), i,
			got[max(0, i-60):min(len(got), i+60)], exact[max(0, i-60):min(len(exact), i+60)])
	}
}

var sealMark = regexp.MustCompile(`⟪loom-secret:[0-9a-f]{16}⟫`)

// journalText joins the text of every LlmTextDelta record of the journals
// under dir (the newest conversation's journal: the one not set aside),
// and fails the test for any journal file that shows the key.
func journalText(t *testing.T, dir, key string) string {
	t.Helper()
	var texts []string
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(string(b), key); i >= 0 {
			t.Errorf("journal %s shows the key at %d", p, i)
		}
		if !strings.HasSuffix(p, ".jsonl") {
			continue
		}
		var text strings.Builder
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var rec struct {
				T string          `json:"t"`
				E json.RawMessage `json:"e"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.T != "LlmTextDelta" {
				continue
			}
			var d struct{ Text string }
			if err := json.Unmarshal(rec.E, &d); err != nil {
				t.Fatalf("journal %s: %v", p, err)
			}
			text.WriteString(d.Text)
		}
		texts = append(texts, text.String())
	}
	if len(texts) != 1 {
		t.Fatalf("want one journal under %s, found %v", dir, files)
	}
	return texts[0]
}

// A key the model echoes, cut anywhere between two or three streamed
// deltas, and a bearer token likewise: `exec --output jsonl` shows
// neither in its message (or reasoning) deltas joined, nor in message_completed, its
// log (stderr) or the journal; each shows the masked answer whole.
func TestExecNeverShowsASplitKey(t *testing.T) {
	key := "sk-split-jsonl-0123456789abcdef"
	pieces, want, masks := splitAnswer(key)
	srv := splitServer(t, pieces)
	dir, env := testRepo(t), isolatedEnv(t)
	env = append(env, "OPENAI_API_KEY="+key)
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--verbose", "--base-url", srv.BaseURL(), "--model", "m", "echo it")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if reqs := srv.Requests(); len(reqs) == 0 {
		t.Fatal("the model was never asked")
	}
	var deltas, completed, reasoning strings.Builder
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev struct{ Type, Text string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		switch ev.Type {
		case "message_delta":
			deltas.WriteString(ev.Text)
			n++
		case "message_completed":
			completed.WriteString(ev.Text)
		case "reasoning_delta":
			reasoning.WriteString(ev.Text)
		}
	}
	t.Logf("%d pieces streamed, %d message_delta events, %d masks", len(pieces), n, masks)
	checkShown(t, "the message_delta events", deltas.String(), want, key)
	checkShown(t, "message_completed", completed.String(), want, key)
	checkShown(t, "the reasoning_delta events", reasoning.String(), want, key)
	for _, l := range leaks(r.stdout+r.stderr, key) {
		t.Errorf("exec's output shows a secret: %s", l)
	}
	checkJournal(t, envDir(env, "XDG_STATE_HOME"), key, strings.Join(pieces, ""))
}

// The same over LSP, to a client with experimental.loom (the
// loom/displayMessage pieces joined) and to a generic one (log lines and
// the final answer): no frame, nor the frames' text joined, nor the log
// file, nor the journal, nor loom.history shows a secret.
func TestServeNeverShowsASplitKey(t *testing.T) {
	for _, loom := range []bool{true, false} {
		t.Run(fmt.Sprintf("loom=%v", loom), func(t *testing.T) {
			key := fmt.Sprintf("sk-split-lsp-%v-0123456789abcdef", loom)
			pieces, want, _ := splitAnswer(key)
			srv := splitServer(t, pieces)
			t.Setenv("OPENAI_API_KEY", key)
			folder, _ := filepath.EvalSymlinks(t.TempDir())
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c := startServer(t, loomBinary)
			ed := fakeeditor.Connect(ctx, c.conn, fakeeditor.Config{
				Loom: loom, Folders: []string{folder},
				InitializationOptions: map[string]any{"model": map[string]any{"base_url": srv.BaseURL(), "name": "m"}},
			})
			if _, err := ed.Initialize(ctx); err != nil {
				t.Fatal(err)
			}
			ended := "loom/turnEnded"
			if !loom {
				ended = "window/showMessage"
			}
			history := askAndStop(t, ctx, c, ed, "echo it", "the end of the turn", func(m fakeeditor.Message) bool { return m.Method == ended })
			var shown strings.Builder
			for _, m := range ed.Messages("") {
				for _, l := range leaks(string(m.Params), key) {
					t.Errorf("%s shows a secret: %s", m.Method, l)
				}
				switch m.Method {
				case jsonrpc.MethodDisplayMessage:
					var p jsonrpc.DisplayMessageParams
					if err := m.Decode(&p); err != nil {
						t.Fatal(err)
					}
					shown.WriteString(p.Text)
				case "window/logMessage":
					var p struct{ Message string }
					if err := m.Decode(&p); err != nil {
						t.Fatal(err)
					}
					shown.WriteString(p.Message + "\n")
				}
			}
			if loom {
				checkShown(t, "the loom/displayMessage pieces", shown.String(), want, key)
			} else {
				for _, l := range leaks(shown.String(), key) {
					t.Errorf("the log lines joined show a secret: %s", l)
				}
				if !strings.Contains(shown.String(), secret.Mask) {
					t.Errorf("the log lines show no masked key:\n%s", shown.String())
				}
			}
			hist, _ := json.Marshal(history)
			for _, l := range leaks(string(hist), key) {
				t.Errorf("loom.history shows a secret: %s", l)
			}
			log := c.cmd.Args[len(c.cmd.Args)-1]
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range leaks(string(b), key) {
				t.Errorf("the log shows a secret: %s", l)
			}
			checkJournal(t, envDir(c.cmd.Env, "XDG_STATE_HOME"), key, strings.Join(pieces, ""))
		})
	}
}

// The same over ACP, with a custom api_key_env and debug logging (the
// ACP front end logs every notification's text): the agent_message_chunk
// texts joined, stdout, the log and the journal show no secret.
func TestACPNeverShowsASplitKey(t *testing.T) {
	key := "sk-split-acp-0123456789abcdef"
	pieces, want, _ := splitAnswer(key)
	srv := splitServer(t, pieces)
	dir, env := testRepo(t), isolatedEnv(t)
	env = append(env, "MY_LLM_TOKEN="+key)
	cfg := filepath.Join(t.TempDir(), "loom.toml")
	if err := os.WriteFile(cfg, []byte("[model]\napi_key_env = \"MY_LLM_TOKEN\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startACP(t, dir, env, "--config", cfg, "--base-url", srv.BaseURL(), "--model", "m", "--log-level", "debug")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p.initialize(t, ctx)
	sess, err := p.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("echo it")}})
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v; stderr:\n%s", resp, err, p.stderr.String())
	}
	if code := p.closeStdin(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	p.client.mu.Lock()
	text := p.client.text.String()
	p.client.mu.Unlock()
	checkShown(t, "the agent_message_chunk texts", text, want, key)
	p.linesM.Lock()
	stdout := p.lines.String()
	p.linesM.Unlock()
	for _, l := range leaks(stdout, key) {
		t.Errorf("stdout shows a secret: %s", l)
	}
	if !strings.Contains(p.stderr.String(), "notification") {
		t.Errorf("no debug log of the notifications, so the log proves nothing:\n%s", p.stderr.String())
	}
	for _, l := range leaks(p.stderr.String(), key) {
		t.Errorf("the log shows a secret: %s", l)
	}
	checkJournal(t, envDir(env, "XDG_STATE_HOME"), key, strings.Join(pieces, ""))
}
