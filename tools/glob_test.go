package tools

import "testing"

// TestGlobMatcher: the glob syntax list_files and grep take, element by
// element.
func TestGlobMatcher(t *testing.T) {
	tests := []struct {
		glob string
		in   []string
		out  []string
	}{
		{"*.go", []string{"a.go", "x/y/b.go"}, []string{"a.go.txt", "ago"}},
		{"src/*.go", []string{"src/a.go"}, []string{"src/x/a.go", "a.go"}},
		{"src/**/*.go", []string{"src/a.go", "src/x/y/a.go"}, []string{"lib/a.go"}},
		{"src/**", []string{"src/a", "src/x/y"}, []string{"srcx/a"}},
		{"?.md", []string{"a.md"}, []string{"ab.md", "x/.md/a"}},
		{"[ab].txt", []string{"a.txt", "b.txt"}, []string{"c.txt"}},
		{"[!ab].txt", []string{"c.txt"}, []string{"a.txt", "b.txt"}},
		{"*.{go,ts}", []string{"a.go", "b.ts"}, []string{"c.js"}},
		{"a,b", []string{"a,b"}, []string{"a"}},
		{"a+b.(x)", []string{"a+b.(x)"}, []string{"aab.x"}},
	}
	for _, tt := range tests {
		g, err := compileGlob(tt.glob)
		if err != nil {
			t.Fatalf("%s: %v", tt.glob, err)
		}
		for _, p := range tt.in {
			if !g.match(p) {
				t.Errorf("%s does not match %s", tt.glob, p)
			}
		}
		for _, p := range tt.out {
			if g.match(p) {
				t.Errorf("%s matches %s", tt.glob, p)
			}
		}
	}
	for _, bad := range []string{"[ab", "{a,b", "a}", "[z-a]"} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("%s: compiled", bad)
		}
	}
}
