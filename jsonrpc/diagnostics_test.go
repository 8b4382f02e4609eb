package jsonrpc

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// diagnosticsScript edits calc.ts and finishes only once the editor's
// diagnostics reached the model in the edit's result.
const diagnosticsScript = `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"calc.ts"}'
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"calc.ts","old_string":"return a + b;","new_string":"return a + c;"}'

[[step]]
match.last_tool_result_contains = "calc.ts:2:14: error: Cannot find name 'c'. (ts)"
text = ["The editor says c is undefined."]
`

// A client that declares experimental.loom.diagnostics is asked
// loom/diagnostics before the edit (at once) and after it (waiting for
// its language servers); the model reads only what the edit introduced.
func TestEditorDiagnosticsReachTheModel(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "calc.ts")
	writeFile(t, path, "export function add(a: number, b: number) {\n  return a + b;\n}\nconst unused: string = 1;\n")
	old := map[string]any{"range": map[string]any{"start": map[string]any{"line": 3, "character": 6}}, "severity": 1, "source": "ts", "code": 2322,
		"message": "Type 'number' is not assignable to type 'string'."}
	fresh := map[string]any{"range": map[string]any{"start": map[string]any{"line": 1, "character": 13}}, "severity": 1, "source": "ts", "code": 2304,
		"message": "Cannot find name 'c'."}
	var mu sync.Mutex
	var asked []string
	hooks := fakeeditor.Hooks{Diagnostics: func(uri string, after bool) []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, filepath.Base(uri)+map[bool]string{false: " before", true: " after"}[after])
		if after {
			return []map[string]any{old, fresh}
		}
		return []map[string]any{old}
	}}
	e := newEnv(t, envOptions{script: diagnosticsScript, hooks: hooks, cfg: fakeeditor.Config{Loom: true, ApplyEdit: true, Folders: []string{dir}}})
	e.ask("break the sum")
	e.await("answer streamed", containsText(e.folder, "The editor says c is undefined."))
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(asked, ", "); got != "calc.ts before, calc.ts after" {
		t.Errorf("loom/diagnostics asked: %s", got)
	}
}
