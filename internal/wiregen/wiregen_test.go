package wiregen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestGeneratedFilesAreCurrent fails when a committed generated file
// (the TypeScript wire types, the Lua annotations, the protocol
// reference) differs from what the generator makes from the Go wire
// types now: change a wire type or a command, then run
// `go generate ./jsonrpc`.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./jsonrpc)", path, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what internal/wiregen makes from the Go wire types: run go generate ./jsonrpc", path)
		}
	}
}

// TestEveryCommandAndMessageIsDocumented: the reference lists each
// command with its argument and result, and each loom/* message.
func TestEveryCommandAndMessageIsDocumented(t *testing.T) {
	root, _ := filepath.Abs("../..")
	files, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(files[DocFile])
	for _, want := range []string{"### `loom.ask`", "Argument: [AskArgs](#askargs). Result: [AskResult](#askresult).",
		"### `loom/toolCall`", "### ToolCallParams", "| `prompt` | `string` |", "### `loom/saveDocuments`"} {
		if !strings.Contains(doc, want) {
			t.Errorf("protocol.md lacks %q", want)
		}
	}
	tsFile := string(files[TSFile])
	for _, want := range []string{"ask: 'loom.ask',", "'loom.ask': { args: AskArgs; result: AskResult };", "export interface ToolCallParams {", "  prompt: string;"} {
		if !strings.Contains(tsFile, want) {
			t.Errorf("wire.gen.ts lacks %q", want)
		}
	}
	if !strings.Contains(string(files[LuaFile]), "---@class loom.wire.AskArgs") {
		t.Errorf("wire.lua lacks the AskArgs class")
	}
}

// TestOuterFieldShadowsEmbedded: a member of a struct itself hides an
// embedded struct's member of the same JSON name, as in encoding/json
// (workspace.ChildStatus's conversation was emitted twice, which
// TypeScript refuses: "Duplicate identifier").
func TestOuterFieldShadowsEmbedded(t *testing.T) {
	type inner struct {
		A string `json:"a"`
		B string `json:"b,omitempty"`
	}
	type outer struct {
		inner
		B string `json:"b"`
	}
	u := &universe{docs: &comments{}, byGo: map[reflect.Type]*wireType{}, names: map[string]reflect.Type{}}
	fs, err := u.fields(reflect.TypeFor[outer]())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s optional=%v", f.Name, f.Optional))
	}
	if want := []string{"a optional=false", "b optional=false"}; strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("fields = %v, want %v", got, want)
	}
}
