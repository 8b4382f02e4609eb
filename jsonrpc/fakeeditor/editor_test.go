package fakeeditor

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// server is the other end of a fake editor's pipe: it records the
// initialize params and calls the editor as loom-lsp would.
type server struct {
	conn jsonrpc2.Conn

	mu   sync.Mutex
	init json.RawMessage
}

func connect(t *testing.T, cfg Config, hooks Hooks) (*Editor, *server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	a, b := net.Pipe()
	s := &server{conn: jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(b))}
	s.conn.Go(ctx, func(_ context.Context, req *jsonrpc2.Request) (any, error) {
		if req.Method() == protocol.MethodInitialize {
			s.mu.Lock()
			s.init = append(json.RawMessage(nil), req.Params()...)
			s.mu.Unlock()
			return map[string]any{"capabilities": map[string]any{}}, nil
		}
		return nil, nil
	})
	e := Connect(ctx, a, cfg)
	e.Hooks = hooks
	t.Cleanup(func() { _ = e.Close(); _ = s.conn.Close() })
	if _, err := e.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return e, s
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func TestInitializeDeclares(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		hooks Hooks
		want  string
	}{
		{"bare", Config{},
			Hooks{},
			`{"capabilities":{"workspace":{"workspaceFolders":true},"window":{"showMessage":{"messageActionItem":{"additionalPropertiesSupport":true}}}},"clientInfo":{"name":"fakeeditor"},"processId":null,"rootUri":null}`},
		{"ale: no window at all", Config{NoShowMessage: true},
			Hooks{},
			`{"capabilities":{"workspace":{"workspaceFolders":true}},"clientInfo":{"name":"fakeeditor"},"processId":null,"rootUri":null}`},
		{"progress without showMessage", Config{NoShowMessage: true, WorkDoneProgress: true},
			Hooks{},
			`{"capabilities":{"workspace":{"workspaceFolders":true},"window":{"workDoneProgress":true}},"clientInfo":{"name":"fakeeditor"},"processId":null,"rootUri":null}`},
		{"unversioned edits", Config{ApplyEdit: true, Unversioned: true, Annotations: true},
			Hooks{},
			`{"capabilities":{"workspace":{"applyEdit":true,"workspaceFolders":true},"window":{"showMessage":{"messageActionItem":{"additionalPropertiesSupport":true}}}},"clientInfo":{"name":"fakeeditor"},"processId":null,"rootUri":null}`},
		{"loom, every flag", Config{
			Loom: true, Thoughts: true, Review: true, ApplyEdit: true, Annotations: true, WorkDoneProgress: true,
			Folders: []string{"/tmp/a", "/tmp/b"}, InitializationOptions: map[string]any{"model": "m"},
			WorkspaceTrust: true, UserSettings: true, Settings: map[string]any{}, ClientName: "Visual Studio Code",
			TrustCommand: "Loom: Trust", InlineDynamic: true,
		},
			Hooks{Diagnostics: func(string, bool) []map[string]any { return nil }},
			`{"capabilities":{"workspace":{"applyEdit":true,"workspaceEdit":{"documentChanges":true,"changeAnnotationSupport":{}},"workspaceFolders":true,"configuration":true},"window":{"workDoneProgress":true,"showMessage":{"messageActionItem":{"additionalPropertiesSupport":true}}},"experimental":{"loom":{"diagnostics":true,"review":true,"saveDocuments":true,"thoughts":true,"trustCommand":"Loom: Trust","userSettings":true,"workspaceTrust":true}},"textDocument":{"inlineCompletion":{"dynamicRegistration":true}}},"clientInfo":{"name":"Visual Studio Code"},"initializationOptions":{"model":"m"},"processId":null,"rootUri":null,"workspaceFolders":[{"name":"/tmp/a","uri":"file:///tmp/a"},{"name":"/tmp/b","uri":"file:///tmp/b"}]}`},
		{"loom, no flag", Config{Loom: true},
			Hooks{},
			`{"capabilities":{"workspace":{"workspaceFolders":true},"window":{"showMessage":{"messageActionItem":{"additionalPropertiesSupport":true}}},"experimental":{"loom":{"saveDocuments":true}}},"clientInfo":{"name":"fakeeditor"},"processId":null,"rootUri":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s := connect(t, tt.cfg, tt.hooks)
			s.mu.Lock()
			got := s.init
			s.mu.Unlock()
			if !sameJSON(t, got, []byte(tt.want)) {
				t.Errorf("initialize params:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestAnswers(t *testing.T) {
	first := protocol.MessageActionItem{Title: "Allow"}
	smr := map[string]any{"type": 3, "message": "run it?", "actions": []any{map[string]any{"title": "Allow"}, map[string]any{"title": "Deny"}}}
	tests := []struct {
		name   string
		cfg    Config
		hooks  Hooks
		method string
		params any
		want   string // the result's JSON, or "error <code>"
	}{
		{"progress create", Config{}, Hooks{}, protocol.MethodWindowWorkDoneProgressCreate, map[string]any{"token": "t"}, `null`},
		{"apply edit, not open", Config{ApplyEdit: true}, Hooks{}, protocol.MethodWorkspaceApplyEdit,
			map[string]any{"edit": map[string]any{}}, `{"applied":false,"failureReason":"no documentChanges"}`},
		{"apply edit, bad params", Config{ApplyEdit: true}, Hooks{}, protocol.MethodWorkspaceApplyEdit, []int{1}, `error -32602`},
		{"show message request: the first action", Config{}, Hooks{}, protocol.MethodWindowShowMessageRequest, smr, `{"title":"Allow"}`},
		{"show message request: no action", Config{}, Hooks{}, protocol.MethodWindowShowMessageRequest,
			map[string]any{"type": 3, "message": "hi"}, `null`},
		{"show message request: bad params", Config{}, Hooks{}, protocol.MethodWindowShowMessageRequest, []int{1}, `error -32602`},
		{"show message request: hook", Config{}, Hooks{ShowMessageRequest: func(p *protocol.ShowMessageRequestParams) *protocol.MessageActionItem {
			return &p.Actions[1]
		}}, protocol.MethodWindowShowMessageRequest, smr, `{"title":"Deny"}`},
		{"show message request: raw hook", Config{NoShowMessage: true, AnswersAnyway: true}, Hooks{
			RawShowMessageRequest: func(params json.RawMessage) any { return map[string]any{"raw": params} },
			ShowMessageRequest:    func(*protocol.ShowMessageRequestParams) *protocol.MessageActionItem { return &first },
		}, protocol.MethodWindowShowMessageRequest, map[string]any{"message": "x"}, `{"raw":{"message":"x"}}`},
		{"configuration: not declared", Config{}, Hooks{}, protocol.MethodWorkspaceConfiguration,
			map[string]any{"items": []any{map[string]any{"section": "loom"}}}, `error -32601`},
		{"configuration: sections", Config{Settings: map[string]any{"loom": map[string]any{"a": 1}}}, Hooks{}, protocol.MethodWorkspaceConfiguration,
			map[string]any{"items": []any{map[string]any{"section": "loom"}, map[string]any{"section": "go"}, map[string]any{}}}, `[{"a":1},null,null]`},
		{"register capability", Config{}, Hooks{}, protocol.MethodClientRegisterCapability, map[string]any{"registrations": []any{}}, `null`},
		{"unregister capability", Config{}, Hooks{}, protocol.MethodClientUnregisterCapability, map[string]any{"unregisterations": []any{}}, `null`},
		{"diagnostics: not declared", Config{Loom: true}, Hooks{}, "loom/diagnostics", map[string]any{"uri": "file:///a"}, `error -32601`},
		{"diagnostics: none", Config{Loom: true}, Hooks{Diagnostics: func(string, bool) []map[string]any { return nil }},
			"loom/diagnostics", map[string]any{"uri": "file:///a"}, `{"diagnostics":[]}`},
		{"diagnostics: the hook's", Config{Loom: true}, Hooks{Diagnostics: func(uri string, after bool) []map[string]any {
			return []map[string]any{{"uri": uri, "after": after}}
		}}, "loom/diagnostics", map[string]any{"uri": "file:///a", "after": true}, `{"diagnostics":[{"uri":"file:///a","after":true}]}`},
		{"diagnostics: bad params", Config{Loom: true}, Hooks{Diagnostics: func(string, bool) []map[string]any { return nil }},
			"loom/diagnostics", []int{1}, `error -32602`},
		{"save: not loom", Config{}, Hooks{}, "loom/saveDocuments", map[string]any{"uris": []string{"file:///a"}}, `error -32601`},
		{"save: all", Config{Loom: true}, Hooks{}, "loom/saveDocuments", map[string]any{"uris": []string{"file:///a"}}, `{"saved":["file:///a"]}`},
		{"save: none asked", Config{Loom: true}, Hooks{}, "loom/saveDocuments", map[string]any{}, `{"saved":[]}`},
		{"save: the hook's", Config{Loom: true}, Hooks{SaveDocuments: func([]string) []string { return nil }},
			"loom/saveDocuments", map[string]any{"uris": []string{"file:///a"}}, `{"saved":[]}`},
		{"save: bad params", Config{Loom: true}, Hooks{}, "loom/saveDocuments", []int{1}, `error -32602`},
		{"show document: not supported", Config{}, Hooks{}, protocol.MethodWindowShowDocument, map[string]any{"uri": "file:///a"}, `error -32601`},
		{"show document: the hook's", Config{}, Hooks{ShowDocument: func(uri string, external bool) bool { return uri == "file:///a%20b" && external }},
			protocol.MethodWindowShowDocument, map[string]any{"uri": "file:///a%20b", "external": true}, `{"success":true}`},
		{"unknown method", Config{}, Hooks{}, "loom/nothing", map[string]any{}, `error -32601`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, s := connect(t, tt.cfg, tt.hooks)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var got json.RawMessage
			_, err := s.conn.Call(ctx, tt.method, tt.params, &got)
			if err != nil {
				var je *jsonrpc2.Error
				if !errors.As(err, &je) {
					t.Fatalf("%s: %v", tt.method, err)
				}
				got = json.RawMessage(`"error ` + jsonCode(je.Code) + `"`)
			}
			want := tt.want
			if len(want) > 6 && want[:6] == "error " {
				want = `"` + want + `"`
			}
			if !sameJSON(t, got, []byte(want)) {
				t.Errorf("%s answered %s, want %s", tt.method, got, want)
			}
			if n := len(e.Messages(tt.method)); n != 1 {
				t.Errorf("%s recorded %d times, want once", tt.method, n)
			}
		})
	}
}

func jsonCode(c jsonrpc2.Code) string {
	b, _ := json.Marshal(c)
	return string(b)
}

// TestProgressCreateHook: the hook runs before the answer goes out.
func TestProgressCreateHook(t *testing.T) {
	release := make(chan struct{})
	called := make(chan struct{})
	_, s := connect(t, Config{WorkDoneProgress: true}, Hooks{WorkDoneProgressCreate: func(context.Context) {
		close(called)
		<-release
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		_, err := s.conn.Call(ctx, protocol.MethodWindowWorkDoneProgressCreate, map[string]any{"token": "t"}, nil)
		answered <- err
	}()
	select {
	case <-called:
	case <-ctx.Done():
		t.Fatal("the hook never ran")
	}
	select {
	case err := <-answered:
		t.Fatalf("answered (%v) before the hook returned", err)
	default:
	}
	close(release)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
}

// TestApplyEditAnnotated: a versioned edit applies to the open buffer,
// plain and annotated text edits alike; a stale version is refused.
func TestApplyEditAnnotated(t *testing.T) {
	path := t.TempDir() + "/a.txt"
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, s := connect(t, Config{ApplyEdit: true, Annotations: true}, Hooks{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.OpenFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	edit := func(version int) string {
		return `{"edit":{"documentChanges":[{"textDocument":{"uri":"file://` + path + `","version":` + strconv.Itoa(version) + `},"edits":[` +
			`{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":3}},"newText":"ONE"},` +
			`{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":3}},"newText":"TWO","annotationId":"a"}]}],` +
			`"changeAnnotations":{"a":{"label":"loom","needsConfirmation":true}}}}`
	}
	_, version, _ := e.BufferText(path)
	var got json.RawMessage
	if _, err := s.conn.Call(ctx, protocol.MethodWorkspaceApplyEdit, json.RawMessage(edit(int(version))), &got); err != nil {
		t.Fatal(err)
	}
	if text, _, _ := e.BufferText(path); !sameJSON(t, got, []byte(`{"applied":true}`)) || text != "ONE\nTWO\n" {
		t.Fatalf("applyEdit answered %s; buffer %q", got, text)
	}
	if _, err := s.conn.Call(ctx, protocol.MethodWorkspaceApplyEdit, json.RawMessage(edit(int(version))), &got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "version mismatch") {
		t.Fatalf("a stale edit answered %s", got)
	}
}
