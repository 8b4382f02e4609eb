package cmdrules

import (
	"strings"
	"testing"
)

// stretchRules are prefix rules a user may have: under them, no line
// that runs code its words carry, nor one that writes into a .git or
// loom's configuration, matches.
var stretchRules = []Rule{{Prefix: "python3"}, {Prefix: "node"}, {Prefix: "perl"}, {Prefix: "ruby"}, {Prefix: "sed"}, {Prefix: "awk"},
	{Prefix: "tar"}, {Prefix: "git grep"}, {Prefix: "go test"}, {Prefix: "npm test"}, {Prefix: "find"}, {Prefix: "echo"}, {Prefix: "cat"}}

// StretchedLines are the lines each rule must not be stretched to: inline
// code in every spelling, code on standard input, code-running options,
// and writes into any .git or protected name at any depth.
var StretchedLines = []string{
	"python3 -c 'open(\"m\",\"w\")'", "python3 -Ic 'import os'", "python3 -c'import os'", "python3 -IBc x", "python3 -Wignore -c x",
	"python3 - <<EOF\nimport os\nEOF", "python3 <<EOF\nimport os\nEOF", "echo 'import os' | python3", "python3 -W ignore", "python3.12 -c x",
	"node -e x", "node -pe x", "node -p x", "node --eval='x'", "node --eval x", "node --print x", "node - <<EOF\nx\nEOF", "node -r ./a",
	"perl -e x", "perl -we 'x'", "perl -e'x'", "perl -E x", "perl -ne x f", "perl -MPOSIX -e x", "perl '-Mx;system(1)' f.pl",
	"ruby -e x", "ruby -we x",
	"sed -n 1p f", "sed '1e sh -c x' f", "awk '{print}' f", "awk 'BEGIN{system(\"x\")}'",
	"tar --checkpoint=1 --checkpoint-action=exec=x -cf a.tar f", "tar -I x -cf a.tar f", "tar -cvIx -f a.tar f",
	"git grep -O x foo", "git grep -nOvim foo", "git grep --open-files-in-pager=x foo",
	"go test -exec x ./...", "go test --exec=x ./...", "go test -toolexec=x ./...", "go test -vettool x", "go test -ldflags=-extld=x",
	"go test -c -o .git/hooks/post-commit", "go test -coverprofile=sub/.git/hooks/x ./...",
	"npm test --script-shell=x", "npm test --node-options=--require=x",
	"npm test > sub/.git/hooks/post-commit", "npm test > .git/config", "npm test > sub/deeper/.loom.toml", "npm test > a/.vscode/settings.json",
	"npm test > x/.GIT/hooks/pre-commit", "echo x >> sub/.zed/settings.json", "cat f > sub/.dir-locals.el",
	"find . -exec x {} ;", "find . -name x -execdir x ;",
}

func TestStretchedRulesNeverMatch(t *testing.T) {
	root := t.TempDir()
	for _, line := range StretchedLines {
		c := Parse(line, root)
		if ok, by := Match(stretchRules, c, root); ok {
			t.Errorf("Match(%q) = true by %v", line, by)
		}
	}
	for _, line := range []string{"python3 script.py -c x", "python3 -m pytest -q", "python3 -I script.py", "node app.js -e x", "perl -w script.pl",
		"ruby script.rb", "git grep -n foo", "go test -run X -count=1 ./...", "go test -o out.test -c", "npm test -- --watch",
		"npm test > out.txt", "echo x > sub/notgit/file", "cat f > .github/x"} {
		if ok, _ := Match(stretchRules, Parse(line, root), root); !ok {
			t.Errorf("Match(%q) = false; want true (no code in its words): %s", line, Parse(line, root).Unmatchable)
		}
	}
}

func TestPrefixOnlyForPrefixablePrograms(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct{ line, prefix string }{
		{"sed -n 10,20p f", ""}, {"awk '{print $1}' f", ""}, {"tar -tf a.tar", ""}, {"git grep -n x", "git grep"},
		{"go test ./...", "go test"}, {"go generate ./...", ""}, {"find . -name x", ""}, {"python3 x.py", ""},
		{"npm test", "npm test"}, {"npm exec x", ""}, {"make", ""}, {"ls -la", "ls"}, {"echo hello", "echo"},
		{"go test -exec x ./...", ""}, {"cargo test --release", "cargo test"}, {"cargo test --config x", ""},
		{"git status -s", "git status"}, {"git log --ext-diff", ""},
	} {
		e, p := Suggest(nil, Parse(c.line, root), root)
		got := ""
		if p != nil {
			got = p.Prefix
		}
		if got != c.prefix {
			t.Errorf("Suggest(%q) prefix = %q, want %q", c.line, got, c.prefix)
		}
		if e == nil && !strings.Contains(c.line, "-exec") {
			t.Errorf("Suggest(%q): no exact rule", c.line)
		}
	}
	for _, bad := range []Rule{{Prefix: "sed"}, {Prefix: "awk"}, {Prefix: "tar"}, {Prefix: "make"}, {Prefix: "rsync"}, {Prefix: "pwsh"}} {
		if _, err := Check(bad, root); err == nil {
			t.Errorf("Check(%+v) accepted", bad)
		}
	}
	if _, err := Check(Rule{Prefix: "python3"}, root); err != nil {
		t.Errorf("Check(python3 prefix): %v (a user's own rule for scripts; inline code never matches it)", err)
	}
}
