package cmdrules

import "testing"

// TestInlineCode: how an interpreter's words run code that is no file.
func TestInlineCode(t *testing.T) {
	tests := []struct {
		words []string
		want  string
	}{
		{[]string{"node", "app.js", "-e"}, ""},
		{[]string{"node", "-e", "x"}, "it runs inline code (node -e)"},
		{[]string{"node", "--eval=x"}, "it runs inline code (node --eval=x)"},
		{[]string{"node", "-pe", "x"}, "it runs inline code (node -pe)"},
		{[]string{"node", "-r", "-e", "app.js"}, ""}, // -e is -r's value
		{[]string{"node", "-"}, "it runs code from standard input (node -)"},
		{[]string{"node", "--", "app.js"}, ""},
		{[]string{"node", "--"}, "it runs code from standard input (node without a script)"},
		{[]string{"node"}, "it runs code from standard input (node without a script)"},
		{[]string{"deno", "eval", "x"}, "it runs inline code (deno eval)"},
		{[]string{"deno", "repl"}, "it runs inline code (deno repl)"},
		{[]string{"deno", "run", "a.ts"}, ""},
		{[]string{"deno"}, ""},
	}
	for _, tt := range tests {
		if got := inlineCode(tt.words[0], interpreters[tt.words[0]], tt.words); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.words, got, tt.want)
		}
	}
}
