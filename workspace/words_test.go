package workspace

import (
	"strings"
	"testing"
)

// TestViewTool: a call's words, as every front end shows them — ACP's
// title and kind, the cards' label (which the VS Code extension and the
// Neovim plugin show as is), the file a client opens.
func TestViewTool(t *testing.T) {
	long := strings.Repeat("x", 250)
	for _, c := range []struct {
		name, args string
		want       ToolView
	}{
		{"bash", `{"command":"npm test"}`, ToolView{Kind: "execute", Title: "Run `npm test`", Label: "$ npm test"}},
		{"bash", `{"command":"` + long + `"}`, ToolView{Kind: "execute", Title: "Run `" + long[:80] + "…`", Label: "$ " + long[:200] + "…"}},
		{"read_file", `{"path":"main.go","offset":10,"limit":31}`, ToolView{Kind: "read", Title: "Read main.go", Label: "main.go:10-40", Path: "main.go", Line: 10, File: "main.go"}},
		{"read_file", `{"path":"main.go","offset":10}`, ToolView{Kind: "read", Title: "Read main.go", Label: "main.go:10-", Path: "main.go", Line: 10, File: "main.go"}},
		{"read_file", `{"path":"main.go","limit":5}`, ToolView{Kind: "read", Title: "Read main.go", Label: "main.go:1-5", Path: "main.go", File: "main.go"}},
		{"grep", `{"pattern":"TODO","path":"src","glob":"*.go"}`, ToolView{Kind: "search", Title: "Search for `TODO` in src", Label: "/TODO/ in src (*.go)", Path: "src"}},
		{"list_files", `{}`, ToolView{Kind: "read", Title: "List files", Label: "."}},
		{"list_files", `{"path":"docs","pattern":"*.md"}`, ToolView{Kind: "read", Title: "List files in docs", Label: "docs (*.md)", Path: "docs"}},
		{"edit_file", `{"path":"a.txt","old_string":"x","new_string":"y"}`, ToolView{Kind: "edit", Title: "Edit a.txt", Label: "a.txt", Path: "a.txt", File: "a.txt"}},
		{"write_file", `{"path":"dir/b.go","content":"package b"}`, ToolView{Kind: "edit", Title: "Write dir/b.go", Label: "dir/b.go", Path: "dir/b.go", File: "dir/b.go"}},
		{"fetch", `{"url":"https://go.dev/doc"}`, ToolView{Kind: "fetch", Title: "Fetch https://go.dev/doc", Label: `{"url":"https://go.dev/doc"}`}},
		{"web_search", `{"query":"raft ready"}`, ToolView{Kind: "search", Title: "Search the web for `raft ready`", Label: `{"query":"raft ready"}`}},
		{"mystery", `{"x": 1}`, ToolView{Kind: "other", Title: "mystery", Label: `{"x": 1}`}},
		// Arguments still streaming: the whole fields, and a string cut
		// off marked, so that the words grow with the arguments.
		{"edit_file", `{"path":"a.t`, ToolView{Kind: "edit", Title: "Edit a.t…", Label: "a.t…", Path: "a.t…", File: "a.t…"}},
		{"bash", `{"command":"echo hel`, ToolView{Kind: "execute", Title: "Run `echo hel…`", Label: "$ echo hel…"}},
		{"read_file", `{"path":"main.go","offset":10,"lim`, ToolView{Kind: "read", Title: "Read main.go", Label: "main.go:10-", Path: "main.go", Line: 10, File: "main.go"}},
		{"write_file", `{"path":"dir/b.go","content":"package b\nfunc`, ToolView{Kind: "edit", Title: "Write dir/b.go", Label: "dir/b.go", Path: "dir/b.go", File: "dir/b.go"}},
	} {
		if got := ViewTool(c.name, c.args); got != c.want {
			t.Errorf("ViewTool(%s, %s) =\n%+v, want\n%+v", c.name, c.args, got, c.want)
		}
	}
}
