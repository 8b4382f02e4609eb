package jsonrpc

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/completion/fimtest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// completionOptions are initializationOptions turning completion on
// against srv (the user's own settings, not the repository's).
func completionOptions(api, base string) map[string]any {
	return map[string]any{"completion": map[string]any{"api": api, "base_url": base, "model": "fim", "api_key_env": "FIM_KEY",
		// Long: only a newer request or a cancel ends a request early.
		"timeout": "5m"}}
}

// inlineAt asks for an inline completion at pos of path.
func inlineAt(ctx context.Context, ed *fakeeditor.Editor, path string, pos protocol.Position) (*InlineCompletionList, error) {
	var res *InlineCompletionList
	err := ed.Call(ctx, MethodInlineCompletion, InlineCompletionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(path)}, Position: pos,
		Context: InlineCompletionContext{TriggerKind: InlineCompletionAutomatic},
	}, &res)
	return res, err
}

// declaresInline reports whether the initialize result declared
// inlineCompletionProvider.
// ready waits until the folders' settings are loaded (loom.status goes
// through the folder's goroutine, which loads them first): completion
// does not wait for them.
func ready(t *testing.T, e *env) {
	t.Helper()
	var st map[string]any
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil {
		t.Fatal(err)
	}
}

func declaresInline(t *testing.T, ed *fakeeditor.Editor) bool {
	t.Helper()
	var res struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(ed.InitializeResultRaw(), &res); err != nil {
		t.Fatal(err)
	}
	_, ok := res.Capabilities["inlineCompletionProvider"]
	return ok
}

// An item at the cursor from the editor's unsaved text: the model gets
// the buffer (not the disk), masked, without AGENTS.md; the key goes in
// the header only; the item inserts at the cursor and its command logs
// the accept locally.
func TestInlineCompletionFromUnsavedBuffer(t *testing.T) {
	srv := fimtest.New()
	defer srv.Close()
	srv.Answer = func(fimtest.Received) string { return "a + b\n}\n" }
	folder, state := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(folder, "AGENTS.md"), "AGENTS-MARKER: the agent's instructions\n")
	src := filepath.Join(folder, "add.go")
	writeFile(t, src, "package add\n\nfunc add(a, b int) int {\n\t\n}\n")
	const key = "sk-fim-secret-0123456789"
	e := newEnv(t, envOptions{
		cfg: fakeeditor.Config{Folders: []string{folder}}, options: completionOptions("infill", srv.URL), stateDir: state,
		getenv: func(name string) string {
			if name == "FIM_KEY" {
				return key
			}
			return ""
		},
	})
	if !declaresInline(t, e.ed) {
		t.Fatalf("initialize did not declare inlineCompletionProvider: %s", e.ed.InitializeResultRaw())
	}
	ready(t, e)
	if err := e.ed.OpenFile(e.ctx, src); err != nil {
		t.Fatal(err)
	}
	// Unsaved: the user typed a comment holding the key, and "return ".
	typed := "// token " + key + "\n\treturn "
	if err := e.ed.EditBuffer(e.ctx, src, protocol.Range{Start: protocol.Position{Line: 3, Character: 1}, End: protocol.Position{Line: 3, Character: 1}}, typed); err != nil {
		t.Fatal(err)
	}
	res, err := inlineAt(e.ctx, e.ed, src, protocol.Position{Line: 4, Character: 8})
	if err != nil {
		t.Fatal(err)
	}
	if res == nil || len(res.Items) != 1 {
		t.Fatalf("result = %+v, want one item", res)
	}
	it := res.Items[0]
	if it.InsertText != "a + b" {
		t.Errorf("insertText = %#v, want %q (one line: the cursor is mid-statement)", it.InsertText, "a + b")
	}
	at := protocol.Position{Line: 4, Character: 8}
	if it.Range == nil || it.Range.Start != at || it.Range.End != at {
		t.Errorf("range = %+v, want empty at %v", it.Range, at)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model requests = %d, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Str("prompt") != "\treturn " || !strings.Contains(r.Str("input_prefix"), "func add(a, b int) int {\n") || r.Str("input_suffix") != "\n}\n" {
		t.Errorf("the model got prefix %q prompt %q suffix %q", r.Str("input_prefix"), r.Str("prompt"), r.Str("input_suffix"))
	}
	if strings.Contains(string(r.Raw), key) || !strings.Contains(r.Str("input_prefix"), "// token [REDACTED]") {
		t.Errorf("the key was not masked in the text sent: %s", r.Raw)
	}
	if strings.Contains(string(r.Raw), "AGENTS-MARKER") {
		t.Errorf("AGENTS.md went to the completion model")
	}
	if r.Auth != "Bearer "+key {
		t.Errorf("Authorization = %q", r.Auth)
	}
	// The client runs the item's command on accept: a local log line.
	if it.Command == nil || it.Command.Command != CmdInlineAccepted {
		t.Fatalf("command = %+v", it.Command)
	}
	var arg InlineAcceptedArgs
	if len(it.Command.Arguments) != 1 || json.Unmarshal(it.Command.Arguments[0], &arg) != nil || arg.Chars != 5 {
		t.Fatalf("command arguments = %s", it.Command.Arguments)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdInlineAccepted, arg, nil); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(state, "completion.log"))
	if err != nil || !strings.Contains(string(log), `"event":"accepted"`) || !strings.Contains(string(log), `"chars":5`) {
		t.Errorf("completion.log = %q, %v", log, err)
	}
}

// A typing burst: ten requests for one document, each after a keystroke
// — only the newest is in flight: each newer one cancels the one before,
// whose HTTP request the server sees aborted; one model request
// completes.
func TestInlineCompletionBurstCancelsAllButLast(t *testing.T) {
	srv := fimtest.New()
	defer srv.Close()
	const final = "x := abcdefghij"
	hold := make(chan struct{}) // closed at the end only: the older requests wait to be aborted
	defer close(hold)           // before srv.Close, which waits for them
	srv.Gate = func(r fimtest.Received) <-chan struct{} {
		if r.Str("prompt") == final {
			return nil
		}
		return hold
	}
	srv.Answer = func(fimtest.Received) string { return "()" }
	folder := t.TempDir()
	src := filepath.Join(folder, "burst.go")
	writeFile(t, src, "package burst\n\nx := \n")
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Folders: []string{folder}}, options: completionOptions("infill", srv.URL)})
	ready(t, e)
	if err := e.ed.OpenFile(e.ctx, src); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([]*InlineCompletionList, 10)
	errs := make([]error, 10)
	for i := range 10 {
		col := uint32(5 + i)
		if err := e.ed.EditBuffer(e.ctx, src, protocol.Range{Start: protocol.Position{Line: 2, Character: col}, End: protocol.Position{Line: 2, Character: col}}, string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = inlineAt(e.ctx, e.ed, src, protocol.Position{Line: 2, Character: col + 1})
		}()
		// The request is on the wire once the model saw it (each reaches
		// it before the next keystroke, the worst case for aborts).
		if err := srv.Await(e.ctx, "request reaching the model", func() bool { return srv.Started.Load() == int64(i+1) }); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if err := srv.Await(e.ctx, "9 aborts", func() bool { return srv.Aborted.Load() == 9 }); err != nil {
		t.Fatal(err)
	}
	if s, c, a := srv.Started.Load(), srv.Completed.Load(), srv.Aborted.Load(); s != 10 || c != 1 || a != 9 {
		t.Errorf("model requests: started %d, completed %d, aborted %d; want 10, 1, 9", s, c, a)
	}
	for i := range 9 {
		if errs[i] != nil || (results[i] != nil && len(results[i].Items) > 0) {
			t.Errorf("superseded request %d = %+v, %v; want null", i, results[i], errs[i])
		}
	}
	if errs[9] != nil || results[9] == nil || len(results[9].Items) != 1 || results[9].Items[0].InsertText != "()" {
		t.Errorf("last request = %+v, %v", results[9], errs[9])
	}
}

// $/cancelRequest cancels a request in flight, and its HTTP request is
// aborted.
func TestInlineCompletionCancelRequestAbortsModel(t *testing.T) {
	srv := fimtest.New()
	defer srv.Close()
	hold := make(chan struct{})
	defer close(hold)
	srv.Gate = func(fimtest.Received) <-chan struct{} { return hold }
	folder := t.TempDir()
	src := filepath.Join(folder, "c.py")
	writeFile(t, src, "def f():\n    return \n")
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Folders: []string{folder}}, options: completionOptions("completions", srv.URL)})
	ready(t, e)
	if err := e.ed.OpenFile(e.ctx, src); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() {
		var res any
		done <- protocol.Call(cctx, e.ed.Conn(), MethodInlineCompletion, InlineCompletionParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(src)}, Position: protocol.Position{Line: 1, Character: 11},
		}, &res)
	}()
	if err := srv.Await(e.ctx, "the model request", func() bool { return srv.Started.Load() == 1 }); err != nil {
		t.Fatal(err)
	}
	cancel() // protocol.Call sends $/cancelRequest
	<-done
	if err := srv.Await(e.ctx, "the abort", func() bool { return srv.Aborted.Load() == 1 }); err != nil {
		t.Fatal(err)
	}
	if r := srv.Requests()[0]; r.Path != "/completions" || r.Str("prompt") != "def f():\n    return " || r.Str("suffix") != "\n" {
		t.Errorf("request %s %s", r.Path, r.Raw)
	}
}

// Typing through a suggestion is served from the cache: no model
// request; and a completion that repeats the text after the cursor is
// trimmed.
func TestInlineCompletionCacheAndSuffix(t *testing.T) {
	srv := fimtest.New()
	defer srv.Close()
	srv.Answer = func(r fimtest.Received) string {
		if strings.HasSuffix(r.Str("prompt"), "print(") {
			return "a, b)" // repeats the ")" after the cursor
		}
		return "compute(1, 2)"
	}
	folder := t.TempDir()
	src := filepath.Join(folder, "m.py")
	writeFile(t, src, "x = \nprint()\n")
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Folders: []string{folder}}, options: completionOptions("ollama", srv.URL)})
	ready(t, e)
	if err := e.ed.OpenFile(e.ctx, src); err != nil {
		t.Fatal(err)
	}
	res, err := inlineAt(e.ctx, e.ed, src, protocol.Position{Line: 0, Character: 4})
	if err != nil || res == nil || len(res.Items) != 1 || res.Items[0].InsertText != "compute(1, 2)" {
		t.Fatalf("first = %+v, %v", res, err)
	}
	if err := e.ed.EditBuffer(e.ctx, src, protocol.Range{Start: protocol.Position{Line: 0, Character: 4}, End: protocol.Position{Line: 0, Character: 4}}, "comp"); err != nil {
		t.Fatal(err)
	}
	res, err = inlineAt(e.ctx, e.ed, src, protocol.Position{Line: 0, Character: 8})
	if err != nil || res == nil || len(res.Items) != 1 || res.Items[0].InsertText != "ute(1, 2)" {
		t.Fatalf("typed through = %+v, %v", res, err)
	}
	if n := srv.Started.Load(); n != 1 {
		t.Errorf("model requests = %d, want 1 (typing through is the cache's)", n)
	}
	res, err = inlineAt(e.ctx, e.ed, src, protocol.Position{Line: 1, Character: 6})
	if err != nil || res == nil || len(res.Items) != 1 || res.Items[0].InsertText != "a, b" {
		t.Fatalf("before a \")\" = %+v, %v; want \"a, b\"", res, err)
	}
	if r := srv.Requests()[1]; r.Path != "/api/generate" || r.Str("suffix") != ")\n" {
		t.Errorf("request %s %s", r.Path, r.Raw)
	}
}

// A repository's .loom.toml can neither turn completion on nor point the
// user's completion elsewhere.
func TestInlineCompletionRepositoryCannotEnableOrRedirect(t *testing.T) {
	evil := fimtest.New()
	defer evil.Close()
	evil.Answer = func(fimtest.Received) string { return "stolen" }
	mine := fimtest.New()
	defer mine.Close()
	mine.Answer = func(fimtest.Received) string { return "mine" }
	repoToml := "[completion]\napi = \"completions\"\nbase_url = \"" + evil.URL + "\"\nmodel = \"evil\"\n"
	src := "x = \n"

	t.Run("enable", func(t *testing.T) {
		folder := t.TempDir()
		writeFile(t, filepath.Join(folder, ".loom.toml"), repoToml)
		writeFile(t, filepath.Join(folder, "a.py"), src)
		e := newEnv(t, envOptions{cfg: fakeeditor.Config{Folders: []string{folder}}})
		if declaresInline(t, e.ed) {
			t.Errorf("a repository's .loom.toml declared inline completion")
		}
		ready(t, e)
		if err := e.ed.OpenFile(e.ctx, filepath.Join(folder, "a.py")); err != nil {
			t.Fatal(err)
		}
		res, err := inlineAt(e.ctx, e.ed, filepath.Join(folder, "a.py"), protocol.Position{Line: 0, Character: 4})
		if err != nil || (res != nil && len(res.Items) > 0) {
			t.Errorf("result = %+v, %v; want null", res, err)
		}
		if n := evil.Started.Load(); n != 0 {
			t.Errorf("the repository's server got %d requests", n)
		}
	})
	t.Run("redirect", func(t *testing.T) {
		folder := t.TempDir()
		writeFile(t, filepath.Join(folder, ".loom.toml"), repoToml)
		writeFile(t, filepath.Join(folder, "a.py"), src)
		e := newEnv(t, envOptions{cfg: fakeeditor.Config{Folders: []string{folder}}, options: completionOptions("infill", mine.URL)})
		ready(t, e)
		if err := e.ed.OpenFile(e.ctx, filepath.Join(folder, "a.py")); err != nil {
			t.Fatal(err)
		}
		res, err := inlineAt(e.ctx, e.ed, filepath.Join(folder, "a.py"), protocol.Position{Line: 0, Character: 4})
		if err != nil || res == nil || len(res.Items) != 1 || res.Items[0].InsertText != "mine" {
			t.Errorf("result = %+v, %v; want the user's server's", res, err)
		}
		if n := evil.Started.Load(); n != 0 {
			t.Errorf("the repository's server got %d requests", n)
		}
	})
}
