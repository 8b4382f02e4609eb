package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// markdownFiles are the Markdown files whose links TestMarkdownLinks
// checks, as globs from the repository's root.
var markdownFiles = []string{"*.md", "docs/*.md", "docs/*/*.md", "editors/*/README.md"}

var (
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
	headingRE  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	schemeRE   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// TestMarkdownLinks: every relative link of the README, CONTRIBUTING,
// docs/ and the editors' READMEs names a file that exists and, for a
// Markdown file, an #anchor one of its headings makes.
func TestMarkdownLinks(t *testing.T) {
	r := root(t)
	var files []string
	for _, g := range markdownFiles {
		m, err := filepath.Glob(filepath.Join(r, g))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files", len(files))
	}
	anchors := map[string]map[string]bool{}
	checked := 0
	for _, f := range files {
		links, err := relativeLinks(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(r, f)
		for _, l := range links {
			checked++
			path, frag, _ := strings.Cut(l.target, "#")
			target := f
			if path != "" {
				target = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s:%d: link %q: no such file", rel, l.line, l.target)
				continue
			}
			if frag == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			if anchors[target] == nil {
				a, err := headingAnchors(target)
				if err != nil {
					t.Fatal(err)
				}
				anchors[target] = a
			}
			if !anchors[target][frag] {
				t.Errorf("%s:%d: link %q: no heading makes the anchor #%s", rel, l.line, l.target, frag)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d links: the scan is broken", checked)
	}
}

type mdLink struct {
	target string
	line   int
}

// relativeLinks are the inline links of file that are not URLs, outside
// code blocks and code spans.
func relativeLinks(file string) ([]mdLink, error) {
	var out []mdLink
	err := eachProseLine(file, func(n int, line string) {
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			if !schemeRE.MatchString(m[1]) {
				out = append(out, mdLink{m[1], n})
			}
		}
	})
	return out, err
}

// headingAnchors are the anchors GitHub makes for file's headings.
func headingAnchors(file string) (map[string]bool, error) {
	out := map[string]bool{}
	seen := map[string]int{}
	err := eachProseLine(file, func(_ int, line string) {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			return
		}
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	})
	return out, err
}

// eachProseLine calls fn with each line of file outside fenced code
// blocks, numbered from 1.
func eachProseLine(file string, fn func(n int, line string)) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fence := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimLeft(line, " ")
		if fence == "" && (strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~")) {
			fence = trim[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			continue
		}
		fn(n, line)
	}
	return sc.Err()
}

// TestArchitectureNamesEveryPackage keeps docs/architecture.md true to
// the code: every Go package of the module is named in it, as `path`.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	r := root(t)
	arch, err := os.ReadFile(filepath.Join(r, "docs/architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	err = filepath.WalkDir(r, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != r && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "editors") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(r, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if rel != "." && !slices.Contains(pkgs, rel) {
			pkgs = append(pkgs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages: the walk is broken", len(pkgs))
	}
	for _, p := range pkgs {
		if !bytes.Contains(arch, []byte("`"+p+"`")) && !bytes.Contains(arch, []byte("`"+p+"/`")) {
			t.Errorf("docs/architecture.md does not name package %s (as `%s`): say what it holds", p, p)
		}
	}
}
