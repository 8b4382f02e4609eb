// Package cmdrules decides whether a bash command is covered by the
// user's approval rules ("always allow `npm test`", "always allow
// commands starting with `go test`").
//
// Rules are matched on the command as bash parses it (mvdan.cc/sh/v3),
// never on its text: `go test ./...; rm -rf ~` is two commands and the
// second one matches no `go test` rule, and `go test $(curl …)` runs
// whatever curl returns, so it matches nothing. A line matches only when
// it is made of plain commands (lists, pipelines, && and ||, subshells
// and { } groups of them), every one of which a rule covers, and it has
// no expansion that could run or smuggle anything: no command, process or
// arithmetic substitution, no $VAR, no globs, braces or ~, no variable
// assignments, no functions or control flow, no eval, sh -c, env, xargs
// and the like, and no redirection to a file outside the workspace.
package cmdrules

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Rule is one approval rule; exactly one of its fields is set.
type Rule struct {
	// Every allows every command, parsed or not ("Always allow every
	// command" in this folder, which clients ask the user to confirm).
	Every bool `json:"every,omitempty"`
	// Exact is a whole command line, as Parse prints it: it matches that
	// line, and, inside a longer line, a simple command with the same
	// words.
	Exact string `json:"exact,omitempty"`
	// Prefix is one or more plain words: it matches a simple command whose
	// words start with them (`go test` matches `go test ./...`, not
	// `go testify` nor `go vet`).
	Prefix string `json:"prefix,omitempty"`
}

// String says the rule in words.
func (r Rule) String() string {
	if r.Every {
		return "every command"
	}
	if r.Prefix != "" {
		return "commands starting with `" + r.Prefix + "`"
	}
	return "`" + r.Exact + "`"
}

// Command is a parsed bash command line.
type Command struct {
	// Text is the line as given.
	Text string
	// Canonical is the line as the parser prints it back (spacing
	// normalised); "" when it does not parse.
	Canonical string
	// Simple are the words of each simple command of the line, quotes
	// removed, in order.
	Simple [][]string
	// Unmatchable, when not "", says why no rule can ever match the line
	// ("it has a command substitution $(…)").
	Unmatchable string
}

// Parse parses line as bash would, for a shell started in root (the
// workspace folder, absolute): what a redirection's relative path means.
func Parse(line, root string) Command { return parse(line, root, false) }

// parse is Parse; prefix says line is a prefix rule's words.
func parse(line, root string, prefix bool) Command {
	c := Command{Text: line}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		c.Unmatchable = "it does not parse as a shell command: " + err.Error()
		return c
	}
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, f); err == nil {
		c.Canonical = strings.TrimSpace(b.String())
	}
	w := walker{root: root, prefix: prefix}
	w.stmts(f.Stmts)
	if w.why == "" && len(w.simple) == 0 {
		w.why = "it runs no command"
	}
	if w.why == "" && w.changesDir && w.relRedirect {
		w.why = "it changes directory and then redirects to a relative path"
	}
	c.Simple, c.Unmatchable = w.simple, w.why
	return c
}

// walker collects a parsed line's simple commands and the first reason
// none can match.
type walker struct {
	root string
	// prefix says the line is a prefix rule's words: what follows them
	// is not known yet (python3 alone is no code on standard input).
	prefix      bool
	simple      [][]string
	why         string
	changesDir  bool
	relRedirect bool
}

func (w *walker) fail(format string, args ...any) {
	if w.why == "" {
		w.why = fmt.Sprintf(format, args...)
	}
}

func (w *walker) stmts(ss []*syntax.Stmt) {
	for _, s := range ss {
		w.stmt(s)
	}
}

func (w *walker) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	if s.Coprocess {
		w.fail("it starts a coprocess")
	}
	for _, r := range s.Redirs {
		w.redirect(r)
	}
	switch c := s.Cmd.(type) {
	case nil:
		if len(s.Redirs) > 0 {
			w.fail("it is only a redirection")
		}
	case *syntax.CallExpr:
		w.call(c)
	case *syntax.BinaryCmd:
		w.stmt(c.X)
		w.stmt(c.Y)
	case *syntax.Subshell:
		w.stmts(c.Stmts)
	case *syntax.Block:
		w.stmts(c.Stmts)
	default:
		w.fail("it uses %s", construct(c))
	}
}

// construct names a compound command for a refusal.
func construct(c syntax.Command) string {
	switch c.(type) {
	case *syntax.FuncDecl:
		return "a function definition"
	case *syntax.DeclClause:
		return "a declaration (export, declare, local, …)"
	case *syntax.IfClause, *syntax.CaseClause:
		return "a conditional"
	case *syntax.WhileClause, *syntax.ForClause:
		return "a loop"
	case *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause:
		return "a test or arithmetic command"
	case *syntax.TimeClause:
		return "time"
	case *syntax.CoprocClause:
		return "a coprocess"
	}
	return "a compound command"
}

func (w *walker) call(c *syntax.CallExpr) {
	if len(c.Assigns) > 0 {
		w.fail("it sets a variable (%s=…)", c.Assigns[0].Name.Value)
		return
	}
	words := make([]string, 0, len(c.Args))
	for _, a := range c.Args {
		s, ok := w.literal(a)
		if !ok {
			return
		}
		words = append(words, s)
	}
	if len(words) == 0 {
		w.fail("it runs no command")
		return
	}
	if why := runsOtherCode(words, w.prefix); why != "" {
		w.fail("%s", why)
		return
	}
	if p := prefixOf(words); p != "" {
		for _, out := range outputs(prefixable[p], words) {
			w.target(out, "it writes")
		}
	}
	if name := words[0]; name == "cd" || name == "pushd" || name == "popd" {
		w.changesDir = true
	}
	w.simple = append(w.simple, words)
}

// shells and wrappers run code given to them as arguments: a rule never
// matches them, and no rule may start with them.
var shells = map[string]string{}

func init() {
	for _, n := range []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "pwsh", "powershell"} {
		shells[n] = "it starts a shell (" + n + ")"
	}
	for _, n := range []string{"eval", "exec", "source", ".", "command", "builtin", "trap", "alias", "enable"} {
		shells[n] = "it uses " + n + ", which runs code given as text"
	}
	for _, n := range []string{"env", "xargs", "sudo", "doas", "su", "nohup", "nice", "ionice", "time", "timeout", "watch",
		"parallel", "setsid", "stdbuf", "chroot", "unshare", "nsenter", "flock", "strace", "ltrace", "script", "ssh"} {
		shells[n] = "it uses " + n + ", which runs another command"
	}
}

// runsOtherCode says why a simple command runs code no rule can see.
func runsOtherCode(words []string, prefix bool) string {
	name := filepath.Base(words[0])
	if why, ok := shells[name]; ok {
		return why
	}
	if in, ok := interpreterOf(name); ok {
		if why := inlineCode(name, in, words); why != "" && !(prefix && strings.Contains(why, "standard input")) {
			return why
		}
	}
	if name == "find" {
		for _, w := range words[1:] {
			switch w {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fls":
				return "it uses find " + w
			}
		}
	}
	return ""
}

// literal returns word with quotes removed, or fails when it expands.
func (w *walker) literal(word *syntax.Word) (string, bool) {
	why := ""
	syntax.Walk(word, func(n syntax.Node) bool {
		if why == "" {
			why = expansion(n)
		}
		return why == ""
	})
	for i, p := range word.Parts {
		if lit, isLit := p.(*syntax.Lit); isLit && why == "" {
			why = literalExpansion(i, lit.Value)
		}
	}
	if why != "" {
		w.fail("%s", why)
		return "", false
	}
	s, err := expand.Literal(nil, word)
	if err != nil {
		w.fail("a word does not expand plainly: %v", err)
		return "", false
	}
	return s, true
}

// expansion says how a node of a word expands (or reads differently
// from what the user sees); "" when it does not.
func expansion(n syntax.Node) string {
	switch x := n.(type) {
	case *syntax.CmdSubst:
		return "it has a command substitution $(…)"
	case *syntax.ProcSubst:
		return "it has a process substitution <(…)"
	case *syntax.ParamExp:
		return fmt.Sprintf("it expands a variable ($%s)", paramName(x))
	case *syntax.ArithmExp:
		return "it has an arithmetic expansion $((…))"
	case *syntax.ExtGlob, *syntax.BraceExp:
		return "it has a glob pattern"
	case *syntax.SglQuoted:
		if x.Dollar {
			// $'…' is literal too, but its escapes make its text
			// differ from what the user reads: refuse.
			return "it has a $'…' string"
		}
	case *syntax.DblQuoted:
		if x.Dollar {
			return "it has a $\"…\" string"
		}
	}
	return ""
}

// literalExpansion says how the unquoted literal value, part i of a
// word, expands: a glob, a brace expansion, a leading ~; "" when it
// does not.
func literalExpansion(i int, value string) string {
	switch {
	case strings.ContainsAny(unescaped(value), "*?["):
		return fmt.Sprintf("it has a glob pattern (%s)", value)
	case strings.Contains(value, "{") && (strings.Contains(value, ",") || strings.Contains(value, "..")):
		return fmt.Sprintf("it has a brace expansion (%s)", value)
	case i == 0 && strings.HasPrefix(value, "~"):
		return "it expands ~"
	}
	return ""
}

// unescaped drops backslash-escaped characters from an unquoted literal,
// leaving the characters bash would treat as special.
func unescaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func paramName(p *syntax.ParamExp) string {
	if p.Param != nil {
		return p.Param.Value
	}
	return "…"
}

// harmless are the files a redirection may name outside the workspace.
var harmless = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true}

var fdWord = regexp.MustCompile(`^([0-9]+-?|-)$`)

func (w *walker) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc != nil {
			w.literal(r.Hdoc) // an unquoted here-document expands $(…)
		}
		return
	case syntax.WordHdoc:
		w.literal(r.Word)
		return
	}
	target, ok := w.literal(r.Word)
	if !ok {
		return
	}
	if (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && fdWord.MatchString(target) {
		return
	}
	if harmless[target] {
		return
	}
	w.target(target, "it redirects")
}

// target checks a file the line writes (how says by what: "it
// redirects", "it writes"): inside the workspace, in no .git and no
// protected configuration file at any depth.
func (w *walker) target(target, how string) {
	if !filepath.IsAbs(target) {
		w.relRedirect = true
	}
	if !inside(w.root, target) {
		w.fail("%s to %s, outside the workspace", how, target)
	} else if protectedTarget(w.root, target) {
		w.fail("%s to %s, a .git directory or loom's configuration", how, target)
	}
}

// inside reports whether path (absolute, or relative to root) names a
// file inside root and outside its .git, symlinks of the existing part
// resolved.
func inside(root, path string) bool {
	if root == "" || !filepath.IsAbs(root) {
		return false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	path = filepath.Clean(path)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	real := resolveExisting(path)
	for _, r := range []string{root, realRoot} {
		rel, err := filepath.Rel(r, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if rel == ".git" || strings.HasPrefix(rel, ".git"+string(filepath.Separator)) {
			return false
		}
		return true
	}
	return false
}

// resolveExisting resolves the symlinks of the longest existing leading
// part of path and appends the rest.
func resolveExisting(path string) string {
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(p) == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// ErrBadRule is wrapped by Check for a rule that can never be used.
var ErrBadRule = errors.New("bad approval rule")

// Check validates r for a workspace rooted at root and returns it in
// canonical form (an exact line as Parse prints it; a prefix's words
// single-spaced).
func Check(r Rule, root string) (Rule, error) {
	switch {
	case r.Every && (r.Exact != "" || r.Prefix != ""):
		return Rule{}, fmt.Errorf("%w: every is a rule of its own (no exact or prefix with it)", ErrBadRule)
	case r.Every:
		return Rule{Every: true}, nil
	case (r.Exact == "") == (r.Prefix == ""):
		return Rule{}, fmt.Errorf("%w: set exactly one of exact, prefix and every", ErrBadRule)
	case r.Exact != "":
		c := Parse(r.Exact, root)
		if c.Unmatchable != "" {
			return Rule{}, fmt.Errorf("%w: no command can match %q: %s", ErrBadRule, r.Exact, c.Unmatchable)
		}
		return Rule{Exact: c.Canonical}, nil
	}
	c := parse(r.Prefix, root, true)
	if c.Unmatchable != "" {
		return Rule{}, fmt.Errorf("%w: prefix %q: %s", ErrBadRule, r.Prefix, c.Unmatchable)
	}
	if len(c.Simple) == 1 && scriptIsCode[filepath.Base(c.Simple[0][0])] {
		return Rule{}, fmt.Errorf("%w: prefix %q: %s (allow exact commands instead)", ErrBadRule, r.Prefix, prefixRefusal(c.Simple[0]))
	}
	if len(c.Simple) != 1 || !oneCall(r.Prefix) {
		return Rule{}, fmt.Errorf("%w: prefix %q: want plain words (one command, no operators or redirections)", ErrBadRule, r.Prefix)
	}
	return Rule{Prefix: strings.Join(quoteAll(c.Simple[0]), " ")}, nil
}

// oneCall reports whether line is one simple command, plainly: no
// operator, redirection, negation or background.
func oneCall(line string) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	s := f.Stmts[0]
	_, call := s.Cmd.(*syntax.CallExpr)
	return call && len(s.Redirs) == 0 && !s.Negated && !s.Background && !s.Coprocess
}

// quoteAll quotes each word as bash would need it.
func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			q = w
		}
		out[i] = q
	}
	return out
}

// Match reports whether rules allow c, and the rule of each simple
// command (or the one exact or every-command rule of the whole line)
// that did.
func Match(rules []Rule, c Command, root string) (bool, []Rule) {
	for _, r := range rules {
		if r.Every {
			return true, []Rule{r}
		}
	}
	if c.Unmatchable != "" {
		return false, nil
	}
	for _, r := range rules {
		if r.Exact != "" && r.Exact == c.Canonical {
			return true, []Rule{r}
		}
	}
	var by []Rule
	for _, words := range c.Simple {
		r, ok := matchSimple(rules, words, root)
		if !ok {
			return false, nil
		}
		if !slices.Contains(by, r) {
			by = append(by, r)
		}
	}
	return true, by
}

// matchSimple finds a rule covering one simple command.
func matchSimple(rules []Rule, words []string, root string) (Rule, bool) {
	for _, r := range rules {
		switch {
		case r.Exact != "":
			e := Parse(r.Exact, root)
			if len(e.Simple) == 1 && slices.Equal(e.Simple[0], words) {
				return r, true
			}
		case r.Prefix != "":
			p := parse(r.Prefix, root, true)
			if p.Unmatchable == "" && len(p.Simple) == 1 && hasPrefix(words, p.Simple[0]) && prefixRefusal(words) == "" {
				return r, true
			}
		}
	}
	return Rule{}, false
}

func hasPrefix(words, prefix []string) bool {
	return len(prefix) > 0 && len(words) >= len(prefix) && slices.Equal(words[:len(prefix)], prefix)
}

// Suggest returns the rules to offer for c, which rules do not allow
// yet: the exact line, and the prefix shared by every simple command not
// yet allowed (`go test`, `npm test`, `ls`), when there is one and it is
// prefixable (see code.go): a program whose words may run code gets
// only the exact line. It returns no rule when none could match c.
func Suggest(rules []Rule, c Command, root string) (exact, prefix *Rule) {
	if c.Unmatchable != "" || c.Canonical == "" {
		return nil, nil
	}
	exact = &Rule{Exact: c.Canonical}
	var common []string
	for _, words := range c.Simple {
		if _, ok := matchSimple(rules, words, root); ok {
			continue
		}
		pre := prefixOf(words)
		if pre == "" || prefixRefusal(words) != "" {
			return exact, nil // no prefix rule for what may run its words
		}
		p := strings.Fields(pre)
		if common == nil {
			common = p
			continue
		}
		if !slices.Equal(common, p) {
			return exact, nil // `go test` and `go vet`: `go` alone would allow too much
		}
	}
	if common == nil {
		return exact, nil
	}
	return exact, &Rule{Prefix: strings.Join(quoteAll(common), " ")}
}
