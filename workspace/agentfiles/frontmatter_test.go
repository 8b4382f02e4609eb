package agentfiles

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestReadMarkdownShapes: a Markdown definition's front matter with a
// BOM and CRLF line ends, closed by the file's last line, missing,
// unclosed, empty, not a map or not YAML; a model list gives its first;
// keys loom does not use are noted with their lines.
func TestReadMarkdownShapes(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Agent  // Name, Description, Instructions, Model, Ignored
		problem    string // the Problem's reason, contained
		line       int
	}{
		{name: "bom crlf", text: "\ufeff---\r\nname: a\r\ndescription: d\r\n---\r\nthe body\r\n",
			want: Agent{Name: "a", Description: "d", Instructions: "the body"}},
		{name: "closed at the end", text: "---\nname: a\ndescription: d\n---",
			want: Agent{Name: "a", Description: "d"}},
		{name: "model list", text: "---\nname: a\ndescription: d\nmodel: [m1, m2]\ncolor: blue\n---\nb\n",
			want: Agent{Name: "a", Description: "d", Instructions: "b", Model: "m1", Ignored: []string{"color (line 5)"}}},
		{name: "none", text: "name: a\n", problem: "no front matter", line: 1},
		{name: "unclosed", text: "---\nname: a\n", problem: "not closed", line: 1},
		{name: "empty", text: "---\n\n---\nbody\n", problem: "the front matter is empty", line: 1},
		{name: "a list", text: "---\n- a\n---\n", problem: "not a map of keys", line: 2},
		{name: "not yaml", text: "---\nname: [\n---\n", problem: "front matter: ", line: 1},
	} {
		a := Agent{Format: FormatClaude}
		p := a.readMarkdown([]byte(tc.text))
		if tc.problem != "" {
			if p == nil || !strings.Contains(p.Reason, tc.problem) || p.Line != tc.line {
				t.Errorf("%s: problem %+v, want %q at line %d", tc.name, p, tc.problem, tc.line)
			}
			continue
		}
		if p != nil {
			t.Errorf("%s: %v", tc.name, p)
			continue
		}
		if a.Name != tc.want.Name || a.Description != tc.want.Description || a.Instructions != tc.want.Instructions ||
			a.Model != tc.want.Model || !slices.Equal(a.Ignored, tc.want.Ignored) {
			t.Errorf("%s: read %+v, want %+v", tc.name, a, tc.want)
		}
	}
}

// TestFrontMatterValues: quoted values lose their quotes (double and
// single), a folded block is joined, comments, list items and nested
// values are not read, and a key without a value is empty.
func TestFrontMatterValues(t *testing.T) {
	meta, body, _, err := FrontMatter("---\na: \"q 1\"\nb: 'r'\nc: >\n  one\n\n  two\nd: plain\ne: \"\n# a comment\n- item\nmeta:\n  nested: x\n---\nthe body")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "q 1", "b": "r", "c": "one  two", "d": "plain", "e": `"`, "meta": ""}
	if !maps.Equal(meta, want) || body != "the body" {
		t.Errorf("read %q, body %q; want %q", meta, body, want)
	}
	if _, _, line, err := FrontMatter("---\na: 1\nnot a key\n---\n"); err == nil || line != 3 {
		t.Errorf("a line that is not key: value: line %d, %v", line, err)
	}
}
