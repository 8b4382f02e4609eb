package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// metaType is a type of the LSP meta-model (testdata/lspmeta).
type metaType struct {
	Kind    string          `json:"kind"`
	Name    string          `json:"name"`
	Element *metaType       `json:"element"`
	Value   json.RawMessage `json:"value"`
	Items   []*metaType     `json:"items"`
}

type metaProperty struct {
	Name     string    `json:"name"`
	Type     *metaType `json:"type"`
	Optional bool      `json:"optional"`
}

type metaStructure struct {
	Name       string         `json:"name"`
	Properties []metaProperty `json:"properties"`
	Extends    []*metaType    `json:"extends"`
	Mixins     []*metaType    `json:"mixins"`
}

type metaMessage struct {
	Method string    `json:"method"`
	Params *metaType `json:"params"`
}

// metaModel is the part of the LSP 3.17 meta-model for the messages
// loom-lsp sends a client (testdata/lspmeta/extract.py).
type metaModel struct {
	Requests      []metaMessage   `json:"requests"`
	Notifications []metaMessage   `json:"notifications"`
	Structures    []metaStructure `json:"structures"`
	TypeAliases   []struct {
		Name string    `json:"name"`
		Type *metaType `json:"type"`
	} `json:"typeAliases"`

	structs map[string]*metaStructure
	aliases map[string]*metaType
	params  map[string]*metaType
}

func loadMetaModel(t *testing.T) *metaModel {
	t.Helper()
	raw, err := os.ReadFile("testdata/lspmeta/metamodel.json")
	if err != nil {
		t.Fatal(err)
	}
	var m metaModel
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m.structs, m.aliases, m.params = map[string]*metaStructure{}, map[string]*metaType{}, map[string]*metaType{}
	for i := range m.Structures {
		m.structs[m.Structures[i].Name] = &m.Structures[i]
	}
	for _, a := range m.TypeAliases {
		m.aliases[a.Name] = a.Type
	}
	for _, r := range append(m.Requests, m.Notifications...) {
		m.params[r.Method] = r.Params
	}
	return &m
}

// properties are a structure's properties, with those it extends and
// mixes in.
func (m *metaModel) properties(name string) map[string]*metaType {
	s := m.structs[name]
	out := map[string]*metaType{}
	if s == nil {
		return out
	}
	for _, p := range s.Properties {
		out[p.Name] = p.Type
	}
	for _, e := range append(append([]*metaType{}, s.Extends...), s.Mixins...) {
		for k, v := range m.properties(e.Name) {
			out[k] = v
		}
	}
	return out
}

// check returns the members of v that its type t does not have, by path.
func (m *metaModel) check(v any, t *metaType, path string) []string {
	if t == nil {
		return nil
	}
	switch t.Kind {
	case "reference":
		if a, ok := m.aliases[t.Name]; ok {
			return m.check(v, a, path)
		}
		if _, ok := m.structs[t.Name]; !ok {
			return nil // an enumeration
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %s is not an object", path, t.Name)}
		}
		return m.checkObject(obj, m.properties(t.Name), path)
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return []string{path + ": not an array"}
		}
		var bad []string
		for i, x := range arr {
			bad = append(bad, m.check(x, t.Element, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return bad
	case "map":
		obj, ok := v.(map[string]any)
		if !ok {
			return []string{path + ": not an object"}
		}
		var value metaType
		_ = json.Unmarshal(t.Value, &value)
		var bad []string
		for k, x := range obj {
			bad = append(bad, m.check(x, &value, path+"."+k)...)
		}
		return bad
	case "or":
		var best []string
		for i, alt := range t.Items {
			if alt.Kind == "base" && alt.Name == "null" && v == nil {
				return nil
			}
			bad := m.check(v, alt, path)
			if len(bad) == 0 {
				return nil
			}
			if i == 0 || len(bad) < len(best) {
				best = bad
			}
		}
		return best
	case "literal":
		obj, ok := v.(map[string]any)
		if !ok {
			return []string{path + ": not an object"}
		}
		var lit struct {
			Properties []metaProperty `json:"properties"`
		}
		_ = json.Unmarshal(t.Value, &lit)
		props := map[string]*metaType{}
		for _, p := range lit.Properties {
			props[p.Name] = p.Type
		}
		return m.checkObject(obj, props, path)
	}
	return nil // base types, string literals
}

func (m *metaModel) checkObject(obj map[string]any, props map[string]*metaType, path string) []string {
	var bad []string
	for k, x := range obj {
		pt, ok := props[k]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s.%s is not a member", path, k))
			continue
		}
		bad = append(bad, m.check(x, pt, path+"."+k)...)
	}
	sort.Strings(bad)
	return bad
}

// checkMessage checks one message loom sent against the meta-model:
// $/progress values against the work-done progress structures.
func (m *metaModel) checkMessage(msg fakeeditor.Message) []string {
	t, ok := m.params[msg.Method]
	if !ok {
		return []string{msg.Method + " is not a message of the meta-model"}
	}
	var v any
	if err := json.Unmarshal(msg.Params, &v); err != nil {
		return []string{msg.Method + ": " + err.Error()}
	}
	bad := m.check(v, t, msg.Method)
	if msg.Method == protocol.MethodProgress {
		obj, _ := v.(map[string]any)
		value, _ := obj["value"].(map[string]any)
		kind, _ := value["kind"].(string)
		name := map[string]string{"begin": "WorkDoneProgressBegin", "report": "WorkDoneProgressReport", "end": "WorkDoneProgressEnd"}[kind]
		if name == "" {
			bad = append(bad, fmt.Sprintf("$/progress: value kind %q", kind))
		} else {
			bad = append(bad, m.check(value, &metaType{Kind: "reference", Name: name}, "$/progress.value")...)
		}
	}
	return bad
}

// The checker finds an extra member where the meta-model has none, deep
// inside a message too.
func TestMetaModelChecker(t *testing.T) {
	m := loadMetaModel(t)
	for _, c := range []struct {
		method, params string
		bad            int
	}{
		{"window/showMessage", `{"type":1,"message":"x"}`, 0},
		{"window/showMessage", `{"type":1,"message":"x","loom":{"folder":"/f"}}`, 1},
		{"window/showMessageRequest", `{"type":1,"message":"x","actions":[{"title":"Allow"}]}`, 0},
		{"window/showMessageRequest", `{"type":1,"message":"x","actions":[{"title":"Allow","rule":{}}]}`, 1},
		{"workspace/applyEdit", `{"edit":{"documentChanges":[{"textDocument":{"uri":"file:///a","version":1},"edits":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"newText":"x"}]}]}}`, 0},
		{"workspace/applyEdit", `{"edit":{"documentChanges":[{"textDocument":{"uri":"file:///a","version":1,"loom":1},"edits":[]}]}}`, 1},
		{"$/progress", `{"token":"t","value":{"kind":"begin","title":"x"}}`, 0},
		{"$/progress", `{"token":"t","value":{"kind":"report","message":"x","turn":2}}`, 1},
		{"loom/whatever", `{}`, 1},
	} {
		got := m.checkMessage(fakeeditor.Message{Method: c.method, Params: json.RawMessage(c.params)})
		if len(got) != c.bad {
			t.Errorf("%s %s: %d findings %q, want %d", c.method, c.params, len(got), got, c.bad)
		}
	}
}

// Every standard request and notification loom sends a generic client
// (no experimental.loom) carries only the members LSP 3.17's meta-model
// gives it: the answer, a commit note, an approval, a review question,
// an edit, progress, logs and an error.
func TestStandardMembers(t *testing.T) {
	m := loadMetaModel(t)
	var asked []string
	cfg := fakeeditor.Config{ApplyEdit: true, WorkDoneProgress: true, ClientName: "Eglot"}
	review, path := genericReviewEnv(t, cfg, answerTitle(keepChanges, &asked))
	if err := review.ed.OpenFile(review.ctx, path); err != nil {
		t.Fatal(err)
	}
	review.ask("change b and i")
	review.await("the answer", hasMethod("window/showMessage", "noted"))
	review.await("the commit", hasMethod("window/showMessage", "committed"))

	cmds := newEnv(t, envOptions{
		script:    bashScript("touch ran"),
		cfg:       fakeeditor.Config{WorkDoneProgress: true, ClientName: "emacs", NoShowMessage: true, AnswersAnyway: true},
		options:   map[string]any{"tools": map[string]any{"bash": "ask"}},
		firstWait: time.Second,
	})
	cmds.ask("run 0.")
	cmds.await("the answer", hasMethod("window/showMessage", "done 0"))
	cmds.ask("something unscripted")
	cmds.await("the error", hasMethod("window/showMessage", `"type":1`))

	seen := map[string]int{}
	for _, e := range []*env{review, cmds} {
		for _, msg := range e.ed.Messages("") {
			if strings.HasPrefix(msg.Method, "loom/") {
				t.Errorf("a generic client got %s", msg.Method)
				continue
			}
			seen[msg.Method]++
			for _, bad := range m.checkMessage(msg) {
				t.Errorf("%s (params %s)", bad, msg.Params)
			}
		}
	}
	for _, method := range []string{"window/showMessage", "window/showMessageRequest", "window/logMessage",
		"workspace/applyEdit", "window/workDoneProgress/create", "$/progress"} {
		if seen[method] == 0 {
			t.Errorf("the scenario sent no %s: it checks less than it says (seen %v)", method, seen)
		}
	}
}

// A failed command's message names the command once, even when the
// error already does (Neovim showed "loom.ask: loom.ask: …").
func TestCommandErrorNamesTheCommandOnce(t *testing.T) {
	for _, c := range []struct{ err, want string }{
		{"nothing to redo", "loom.redo: nothing to redo"},
		{"loom.redo: nothing to redo", "loom.redo: nothing to redo"},
		{"loom.ask: loom.ask: held back", "loom.ask: held back"},
	} {
		name := strings.SplitN(c.want, ":", 2)[0]
		if got := commandError(name, errors.New(c.err)); got != c.want {
			t.Errorf("commandError(%q, %q) = %q, want %q", name, c.err, got, c.want)
		}
	}
}
