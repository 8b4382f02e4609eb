package jsonrpc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// quotedBashScript is bashScript for commands with any quotes in them.
func quotedBashScript(commands ...string) string {
	var b strings.Builder
	for i, c := range commands {
		arg, _ := json.Marshal(map[string]string{"command": c})
		fmt.Fprintf(&b, "[[step]]\nmatch.last_user_contains = %q\n  [[step.tool_call]]\n  name = \"bash\"\n  arguments = %s\n\n", fmt.Sprintf("run %d.", i), strconv.Quote(string(arg)))
		fmt.Fprintf(&b, "[[step]]\nmatch.last_role = \"tool\"\ntext = [%q]\n\n", fmt.Sprintf("done %d", i))
	}
	return b.String()
}

// Approval rules cannot be stretched, through the LSP front end: under
// the user's prefix rules for python3, node, perl, git grep, go test,
// npm test, echo and find, each line that runs code its words carry (or
// writes into a nested .git or a protected file) is asked, and the
// client's Deny keeps it from running; rules for programs whose
// arguments are code cannot be added at all.
func TestStretchedRulesAreAsked(t *testing.T) {
	commands := []string{
		`python3 -Ic 'open("m0","w")'`,
		`python3 -c'open("m1","w")'`,
		"python3 - <<EOF\nopen('m2','w')\nEOF",
		`node -pe 'require("fs").writeFileSync("m3","")'`,
		`node --eval='require("fs").writeFileSync("m4","")'`,
		`perl -we 'open(F,">m5")'`,
		`perl -e'open(F,">m6")'`,
		`git grep -O'touch m7' x`,
		`go test -exec='touch m8' ./...`,
		`npm test > sub/.git/hooks/post-commit`,
		`echo x > sub/.loom.toml`,
		`find . -maxdepth 0 -exec touch m11 ;`,
		`echo '{}' > deep/er/.vscode/settings.json`,
	}
	an := &answerer{}
	e := newEnv(t, envOptions{
		script:  quotedBashScript(commands...),
		cfg:     loomClient,
		options: map[string]any{"tools": map[string]any{"bash": "ask"}},
		hooks:   fakeeditor.Hooks{RawShowMessageRequest: an.hook},
	})
	for _, d := range []string{"sub/.git/hooks", "deep/er/.vscode"} {
		os.MkdirAll(filepath.Join(e.folder, d), 0o755)
	}
	for _, p := range []string{"python3", "node", "perl", "git grep", "go test", "npm test", "echo", "find"} {
		if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, RuleArgs{Prefix: p}, nil); err != nil {
			t.Fatalf("loom.addRule %s: %v", p, err)
		}
	}
	for _, p := range []string{"sed", "awk", "tar", "make"} {
		if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, RuleArgs{Prefix: p}, nil); err == nil {
			t.Errorf("loom.addRule {prefix: %s} accepted: its arguments run code", p)
		}
	}
	an.choose = func(a approvalAsked) any {
		if p := ruleAction(a, "prefix"); p != nil {
			t.Errorf("%q: a prefix rule offered: %+v", a.Loom.Command, p.Rule)
		}
		return map[string]any{"title": approveDeny}
	}
	for n, c := range commands {
		before := an.count()
		if got := e.runTurn(n); got.Status != "failed" || an.count() != before+1 {
			t.Errorf("%q: bash %s after %d questions; want asked once, denied", c, got.Status, an.count()-before)
		}
	}
	for i := range commands {
		if _, err := os.Stat(filepath.Join(e.folder, fmt.Sprintf("m%d", i))); err == nil {
			t.Errorf("m%d exists: %q ran", i, commands[i])
		}
	}
	for _, f := range []string{"sub/.git/hooks/post-commit", "sub/.loom.toml", "deep/er/.vscode/settings.json"} {
		if _, err := os.Stat(filepath.Join(e.folder, f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}
