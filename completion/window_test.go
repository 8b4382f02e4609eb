package completion

import (
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/lsppos"
)

func TestWindowUTF16AndBudget(t *testing.T) {
	// "é" and "😀" are 1 and 2 UTF-16 units: the cursor after them is at
	// character 6 of line 1.
	text := "line0\nx é😀 = y\nline2\n"
	w, err := NewWindow(text, lsppos.Position{Line: 1, Character: 6}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if w.Prefix != "line0\nx é😀 " || w.Suffix != "= y\nline2\n" {
		t.Errorf("window = %q | %q", w.Prefix, w.Suffix)
	}
	if w.Multiline {
		t.Errorf("mid-line cursor is multiline")
	}
	// A budget of 10 tokens (30 bytes before, 10 after) keeps whole lines.
	var b strings.Builder
	for i := range 50 {
		b.WriteString(strings.Repeat("a", 9) + string(rune('0'+i%10)) + "\n")
	}
	big := b.String() + "cursor\n" + b.String()
	w, err = NewWindow(big, lsppos.Position{Line: 50, Character: 6}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Prefix) > 30+6 || !strings.HasSuffix(w.Prefix, "\ncursor") || strings.Count(w.Prefix, "\n") != 2 {
		t.Errorf("prefix %q", w.Prefix)
	}
	if w.Suffix != "\n" {
		t.Errorf("suffix %q", w.Suffix)
	}
	// Typing on the line only grows the prefix.
	typed := strings.Replace(big, "cursor\n", "cursorXY\n", 1)
	w2, _ := NewWindow(typed, lsppos.Position{Line: 50, Character: 8}, 10)
	if w2.Prefix != w.Prefix+"XY" || w2.Suffix != w.Suffix {
		t.Errorf("after typing: %q | %q", w2.Prefix, w2.Suffix)
	}
}

func TestMultiline(t *testing.T) {
	cases := []struct {
		before, after string
		want          bool
	}{
		{"\t", "", true},
		{"func f() {", "", true},
		{"if x:", "", true},
		{"foo(", ")", true},
		{"x := fo", "", false},
		{"x := f(", "a)", false},
		{"return ", "", false},
	}
	for _, c := range cases {
		if got := Multiline(c.before, c.after); got != c.want {
			t.Errorf("Multiline(%q, %q) = %v", c.before, c.after, got)
		}
	}
}

func TestTrim(t *testing.T) {
	cases := []struct {
		name, answer, suffix string
		multi                bool
		want                 string
	}{
		{"single line cut", "a + b\n}\n", "\n}", false, "a + b"},
		{"rest of line repeated", "a, b)", ")\n", false, "a, b"},
		{"closer not repeated", "bar(x)", ")\n", false, "bar(x)"},
		{"closer repeated", "bar(x))", ")\n", false, "bar(x)"},
		{"statement end repeated", "x + 1;", ";\n", false, "x + 1"},
		{"closing lines repeated", "\n\treturn a + b\n}", "\n}\n", true, "\n\treturn a + b"},
		{"only repeats", "}", "\n}\n", true, ""},
		{"blank", "  \n", "", true, ""},
		{"inner block closed", "\n\tif x {\n\t\treturn\n\t}", "\n}\n", true, "\n\tif x {\n\t\treturn\n\t}"},
		{"kept whole", "\n\tx := 1\n\ty := 2", "\n}\n", true, "\n\tx := 1\n\ty := 2"},
	}
	for _, c := range cases {
		if got := Trim(c.answer, c.suffix, c.multi); got != c.want {
			t.Errorf("%s: Trim(%q, %q, %v) = %q, want %q", c.name, c.answer, c.suffix, c.multi, got, c.want)
		}
	}
}

func TestCacheTypingThrough(t *testing.T) {
	c := NewCache()
	c.Put("a.go", "x := ", "\n", "compute(1, 2)")
	for _, tc := range []struct {
		prefix, want string
		ok           bool
	}{
		{"x := ", "compute(1, 2)", true},
		{"x := comp", "ute(1, 2)", true},
		{"x := compx", "", false},
		{"x := compute(1, 2)", "", false},
	} {
		got, ok := c.Get("a.go", tc.prefix, "\n")
		if got != tc.want || ok != tc.ok {
			t.Errorf("Get(%q) = %q, %v; want %q, %v", tc.prefix, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := c.Get("a.go", "x := comp", "other\n"); ok {
		t.Errorf("served across a different suffix")
	}
	if _, ok := c.Get("b.go", "x := ", "\n"); ok {
		t.Errorf("served across documents")
	}
}
