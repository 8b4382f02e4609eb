package jsonrpc

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/completion/fimtest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// registrations returns the (un)registrations of inline completion the
// server sent, in order: "+id" for a registration, "-id" for an
// unregistration.
func registrations(t *testing.T, msgs []fakeeditor.Message) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		switch m.Method {
		case protocol.MethodClientRegisterCapability:
			var p struct {
				Registrations []struct {
					ID              string          `json:"id"`
					Method          string          `json:"method"`
					RegisterOptions json.RawMessage `json:"registerOptions"`
				} `json:"registrations"`
			}
			if err := m.Decode(&p); err != nil {
				t.Fatal(err)
			}
			for _, r := range p.Registrations {
				if r.Method == MethodInlineCompletion {
					out = append(out, "+"+r.ID)
					if string(r.RegisterOptions) != `{"documentSelector":[{"scheme":"file"}]}` {
						t.Errorf("registerOptions = %s", r.RegisterOptions)
					}
				}
			}
		case protocol.MethodClientUnregisterCapability:
			var p struct {
				// LSP's own misspelling.
				Unregisterations []struct {
					ID     string `json:"id"`
					Method string `json:"method"`
				} `json:"unregisterations"`
			}
			if err := m.Decode(&p); err != nil {
				t.Fatal(err)
			}
			for _, r := range p.Unregisterations {
				if r.Method == MethodInlineCompletion {
					out = append(out, "-"+r.ID)
				}
			}
		}
	}
	return out
}

// awaitRegistrations waits until the server's (un)registrations of
// inline completion, in the order the editor read them, are want.
func awaitRegistrations(t *testing.T, e *env, want ...string) {
	t.Helper()
	err := e.ed.Await(e.ctx, "inline completion registrations "+string(mustJSON(t, want)), func(msgs []fakeeditor.Message) bool {
		return slices.Equal(registrations(t, msgs), want)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Completion turned on later, in the user's own settings pulled with
// workspace/configuration (VS Code's user settings), reaches a client
// that registers inline completion dynamically without a restart: the
// capability is not declared at initialize, client/registerCapability
// follows the settings, the completion is served; turned off,
// client/unregisterCapability follows and nothing reaches the model.
// Turned on in the workspace's settings of an untrusted folder (a
// repository's .vscode/settings.json), nothing is registered.
func TestInlineCompletionRegisteredAsSettingsChange(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	srv := fimtest.New()
	defer srv.Close()
	srv.Answer = func(fimtest.Received) string { return "a + b" }
	folder := t.TempDir()
	src := filepath.Join(folder, "add.go")
	writeFile(t, src, "package add\n\nfunc add(a, b int) int {\n\treturn \n}\n")
	settings := func(user, ws map[string]any) map[string]any { return map[string]any{"loom.user": user, "loom": ws} }
	on := map[string]any{"completion": map[string]any{"api": "infill", "base_url": srv.URL, "timeout": "5m"}}
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, WorkspaceTrust: true, UserSettings: true, InlineDynamic: true,
		Folders: []string{folder}, Settings: settings(nil, nil)},
		options: map[string]any{"trust": map[string]any{"workspace": false}}})
	change := func(s map[string]any) {
		t.Helper()
		e.ed.SetSettings(s)
		if err := e.ed.Notify(e.ctx, protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": nil}); err != nil {
			t.Fatal(err)
		}
	}
	if declaresInline(t, e.ed) {
		t.Fatalf("initialize declared inlineCompletionProvider statically: %s", e.ed.InitializeResultRaw())
	}
	e.statusUntil("the folder loaded, completion off", func(st workspace.Status) bool { return st.Completion == nil })
	if err := e.ed.OpenFile(e.ctx, src); err != nil {
		t.Fatal(err)
	}
	at := protocol.Position{Line: 3, Character: 8}

	// The workspace's settings of an untrusted folder: a widening key,
	// held back; nothing registered.
	change(settings(nil, on))
	e.statusUntil("the workspace's completion held back", func(st workspace.Status) bool {
		return st.TrustNotice != "" && st.Completion == nil
	})
	// The user's own settings: registered, served, named in loom.status.
	change(settings(on, nil))
	awaitRegistrations(t, e, "+"+inlineRegistrationID)
	st := e.statusUntil("completion in the status", func(st workspace.Status) bool { return st.Completion != nil })
	if st.Completion.API != "infill" {
		t.Errorf("status completion = %+v", st.Completion)
	}
	res, err := inlineAt(e.ctx, e.ed, src, at)
	if err != nil {
		t.Fatal(err)
	}
	if res == nil || len(res.Items) != 1 || res.Items[0].InsertText != "a + b" {
		t.Fatalf("result = %+v, want the model's item", res)
	}
	// The same settings again: no second registration.
	change(settings(on, nil))
	e.statusUntil("settings applied again", func(st workspace.Status) bool { return st.Completion != nil })

	// Off: unregistered; a request that still comes is answered null
	// without asking the model.
	change(settings(nil, nil))
	awaitRegistrations(t, e, "+"+inlineRegistrationID, "-"+inlineRegistrationID)
	before := len(srv.Requests())
	if res, err = inlineAt(e.ctx, e.ed, src, protocol.Position{Line: 3, Character: 8}); err != nil || res != nil {
		t.Fatalf("after unregistering: result %+v, err %v; want null", res, err)
	}
	if n := len(srv.Requests()); n != before {
		t.Errorf("the model got %d requests after completion was turned off", n-before)
	}
	// And on again.
	change(settings(on, nil))
	awaitRegistrations(t, e, "+"+inlineRegistrationID, "-"+inlineRegistrationID, "+"+inlineRegistrationID)
}

// A client that registers dynamically, with completion on from the
// start (initializationOptions): registered after initialized, not
// declared in the initialize result (a static declaration could never
// be taken back).
func TestInlineCompletionRegisteredAtStart(t *testing.T) {
	srv := fimtest.New()
	defer srv.Close()
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{InlineDynamic: true}, options: completionOptions("infill", srv.URL)})
	if declaresInline(t, e.ed) {
		t.Fatalf("initialize declared inlineCompletionProvider statically: %s", e.ed.InitializeResultRaw())
	}
	awaitRegistrations(t, e, "+"+inlineRegistrationID)
}
