package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveAdversarial(t *testing.T) {
	env := newEnv(t)
	root := env.Root
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, outside, map[string]string{"secret": "s", "dir/x": "x"})
	writeFiles(t, root, map[string]string{"a.txt": "a", "sub/b.txt": "b", "~lit": "tilde", "sub/deep/c.txt": "c"})
	links := map[string]string{
		"out":          outside,                           // dir link pointing out
		"outfile":      filepath.Join(outside, "secret"),  // file link pointing out
		"outrel":       "../" + filepath.Base(outside),    // relative link out (sibling temp dir? resolved below)
		"dotdot":       "..",                              // link to parent
		"in":           "sub",                             // link staying inside
		"infile":       "sub/b.txt",                       // file link inside
		"dangling":     filepath.Join(outside, "nothere"), // dangling link pointing out
		"danglingin":   "sub/nothere",                     // dangling link pointing in
		"sub/up":       "../..",                           // nested link escaping
		"sub/chain":    "../out",                          // link to a link pointing out
		"loop1":        "loop2",                           // loop
		"loop2":        "loop1",                           //
		"rootabs":      "/",                               // link to /
		"sub/selfroot": root,                              // absolute link to root itself
		"sub/deep/esc": filepath.Join(outside, "dir"),     // deep link out
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink made by an earlier bash command.
	mustOK(t, run(t, Bash{}, env, map[string]any{"command": "ln -s " + outside + " bashlink"}))

	long := strings.Repeat("a/", 2100) + "x"
	longName := strings.Repeat("n", 300)
	cases := []struct {
		p    string
		want string // relative to root; "" means refused
	}{
		{"a.txt", "a.txt"},
		{"./a.txt", "a.txt"},
		{"sub/../a.txt", "a.txt"},
		{"sub/b.txt", "sub/b.txt"},
		{".", "."},
		{"new/dir/file.go", "new/dir/file.go"},
		{filepath.Join(root, "a.txt"), "a.txt"},
		{root, "."},
		{"in/b.txt", "sub/b.txt"},
		{"infile", "sub/b.txt"},
		{"in/newfile", "sub/newfile"},
		{"sub/selfroot/a.txt", "a.txt"},
		{"sub/∕etc", ""},
		{"..", ""},
		{"../", ""},
		{"../x", ""},
		{"../../../../etc/passwd", ""},
		{"sub/../../x", ""},
		{"a/b/../../../x", ""},
		{"/etc/passwd", ""},
		{"/", ""},
		{outside, ""},
		{filepath.Join(outside, "secret"), ""},
		{root + "/../" + filepath.Base(outside), ""},
		{root + "x/a.txt", ""}, // sibling sharing the prefix
		{"out", ""},
		{"out/secret", ""},
		{"out/newfile", ""},
		{"out/dir/x", ""},
		{"outfile", ""},
		{"outrel/secret", ""},
		{"dotdot", ""},
		{"dotdot/x", ""},
		{"sub/up", ""},
		{"sub/up/etc", ""},
		{"sub/chain/secret", ""},
		{"sub/deep/esc/x", ""},
		{"sub/deep/esc/new/new", ""},
		{"dangling", ""},
		{"danglingin", ""},
		{"loop1", ""},
		{"loop1/x", ""},
		{"rootabs/etc/passwd", ""},
		{"rootabs", ""},
		{"bashlink/secret", ""},
		{"bashlink/new", ""},
		{"a.txt\x00/../../etc", ""},
		{"a.txt\x00", ""},
		{"~", ""},
		{"~/x", ""},
		{"~root/.ssh", ""},
		{"~lit", ""},
		{"", ""},
		{long, ""},
		{longName, ""},
		{"sub/" + longName + "/x", ""},
		{"..∕..∕etc∕passwd", ""},     // U+2215 DIVISION SLASH
		{"．．/．．/etc", ""},            // fullwidth full stops
		{"sub／..／..／x", ""},          // fullwidth solidus
		{"a⁄b", ""},                  // fraction slash
		{"a\nb", ""},                 // control character
		{"\xff\xfe", ""},             // invalid UTF-8
		{`..\..\x`, `..\..\x`},       // a backslash is a name character on Unix
		{"....", "...."},             // not a parent reference
		{"a.txt/../../x", ""},        // through a file, then up
		{"sub/b.txt/x", ""},          // a file used as a directory
		{"//etc/passwd", ""},         // doubled slash
		{"/./etc/../etc/passwd", ""}, // absolute with dots
		{"sub/./../sub/../../x", ""},
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	escapes := 0
	for _, c := range cases {
		got, err := Resolve(root, c.p)
		if err == nil && !within(root, got) {
			escapes++
			t.Errorf("ESCAPE: Resolve(%q) = %q", c.p, got)
			continue
		}
		if c.want == "" {
			if err == nil {
				t.Errorf("Resolve(%q) = %q, want refused", c.p, got)
			} else if !errors.Is(err, ErrOutsideRoot) && !errors.Is(err, ErrBadPath) {
				t.Errorf("Resolve(%q) error %v wraps neither ErrOutsideRoot nor ErrBadPath", c.p, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Resolve(%q): %v, want %q", c.p, err, c.want)
			continue
		}
		if want := filepath.Join(root, c.want); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", c.p, got, want)
		}
	}
	if escapes != 0 {
		t.Fatalf("%d escapes", escapes)
	}
}

// A root given through a symlink works with both spellings of a path.
func TestResolveSymlinkedRoot(t *testing.T) {
	real := newEnv(t).Root
	writeFiles(t, real, map[string]string{"f": "x"})
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"f", filepath.Join(link, "f"), filepath.Join(real, "f")} {
		got, err := Resolve(link, p)
		if err != nil || got != filepath.Join(real, "f") {
			t.Errorf("Resolve(link, %q) = %q, %v", p, got, err)
		}
	}
	if _, err := Resolve("relative/root", "f"); err == nil {
		t.Error("a relative root was accepted")
	}
}
