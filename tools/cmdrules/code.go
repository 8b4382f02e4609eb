package cmdrules

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
)

// Arguments that run code.
//
// A prefix rule allows a program with any further words, so it must be
// one whose words are data: "always allow `sed`" would allow
// `sed '1e sh -c …'`, `awk` its system(), `tar` its
// --checkpoint-action=exec, `git grep -O` a pager of the model's choice.
// So Suggest offers a prefix only from [prefixable], where each entry
// names the options that would make that program run (or write) what its
// words say, and a prefix rule never matches a command with one of them,
// spelled any way (-x, --x, -x=…, --x=…, or inside a cluster of short
// options). Whatever the rules, no line matches that gives an
// interpreter code inline (python3 -c, -Ic, -c'…', node -e, -pe,
// --eval=…, perl -we, -e'…', ruby -e, php -r, …) or on its standard input
// (python3 - <<EOF, echo … | node), that runs a program whose script is
// an argument ([scriptIsCode]: sed, awk, …) under a prefix rule, or that
// writes into a .git directory or a protected configuration file at any
// depth, by redirection or by an output option.

// prefixSpec is what a prefixable program refuses under a prefix rule.
type prefixSpec struct {
	// refuse are the options that run or load code (long names and,
	// when one letter, short ones too).
	refuse []string
	// noOptions refuses every option before a "--" (npm takes any
	// configuration key as an option: --script-shell, --node-options).
	noOptions bool
	// writes are the options whose value is a file written.
	writes []string
}

// goOutputs are the go command's options that write a file.
var goOutputs = []string{"o", "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir"}

// prefixable are the prefixes Suggest may offer: programs (and
// subcommands) whose words are data, with the options that are not.
var prefixable = map[string]prefixSpec{
	"ls": {}, "cat": {}, "head": {}, "tail": {}, "wc": {}, "pwd": {}, "echo": {}, "grep": {}, "diff": {},
	"stat": {}, "du": {}, "which": {}, "cut": {}, "uniq": {}, "basename": {}, "dirname": {}, "realpath": {},
	"rg":          {refuse: []string{"pre", "pre-glob", "z", "search-zip"}},
	"git status":  {refuse: []string{"c", "config-env"}},
	"git diff":    {refuse: []string{"ext-diff", "textconv", "output"}},
	"git log":     {refuse: []string{"ext-diff", "textconv", "output"}},
	"git show":    {refuse: []string{"ext-diff", "textconv", "output"}},
	"git grep":    {refuse: []string{"O", "open-files-in-pager"}},
	"go test":     {refuse: []string{"exec", "toolexec", "vettool", "ldflags", "gccgoflags", "overlay"}, writes: goOutputs},
	"go build":    {refuse: []string{"exec", "toolexec", "ldflags", "gccgoflags", "overlay"}, writes: goOutputs},
	"go vet":      {refuse: []string{"vettool", "toolexec", "overlay"}},
	"npm test":    {noOptions: true},
	"npm run":     {noOptions: true},
	"cargo test":  {refuse: []string{"config", "Z"}},
	"cargo build": {refuse: []string{"config", "Z"}},
	"cargo check": {refuse: []string{"config", "Z"}},
}

// PrefixablePrograms lists the prefixes Suggest may offer, sorted (for
// the documentation).
func PrefixablePrograms() []string {
	out := make([]string, 0, len(prefixable))
	for p := range prefixable {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// scriptIsCode are programs whose first operand is a program in their
// own language (sed, awk, …) or whose options run commands (tar
// --checkpoint-action, zip -TT, rsync -e, make --eval): no prefix rule
// matches them (an exact rule, the user's own line, still does).
var scriptIsCode = map[string]bool{
	"sed": true, "gsed": true, "awk": true, "gawk": true, "mawk": true, "nawk": true, "m4": true, "dc": true, "ed": true,
	"ex": true, "vi": true, "vim": true, "nvim": true, "emacs": true, "gdb": true, "lldb": true, "expect": true,
	"make": true, "gmake": true, "tar": true, "zip": true, "rsync": true,
}

// interpreter is how a language's command line takes code inline.
type interpreter struct {
	// short are the one-letter options whose value is code.
	short string
	// long are the long options whose value is code.
	long []string
	// valued are options that take a separate value (so the next word
	// is not the script).
	valued []string
}

// interpreters are the programs that run a script file, or code given
// inline or on their standard input.
var interpreters = map[string]interpreter{
	"python":    {short: "c", valued: []string{"W", "X"}},
	"node":      {short: "ep", long: []string{"eval", "print"}, valued: []string{"r", "require", "import", "loader", "experimental-loader", "C", "conditions", "input-type", "title"}},
	"nodejs":    {short: "ep", long: []string{"eval", "print"}, valued: []string{"r", "require", "import", "loader", "experimental-loader", "C", "conditions", "input-type", "title"}},
	"bun":       {short: "ep", long: []string{"eval", "print"}},
	"perl":      {short: "eEmM", valued: []string{"I", "x"}},
	"ruby":      {short: "e", valued: []string{"I", "r"}},
	"php":       {short: "rBRE", valued: []string{"c", "d", "z"}},
	"lua":       {short: "e", valued: []string{"l"}},
	"luajit":    {short: "e", valued: []string{"l"}},
	"Rscript":   {short: "e", long: []string{"expr"}},
	"julia":     {short: "eE", long: []string{"eval", "print"}},
	"osascript": {short: "e"},
	"elixir":    {short: "e", long: []string{"eval"}},
	"guile":     {short: "ce"},
	"racket":    {short: "e", long: []string{"eval"}},
	"groovy":    {short: "e"},
	"tclsh":     {},
	"irb":       {},
	"deno":      {},
}

// interpreterOf returns the interpreter a program name is (python3.12 is
// python).
func interpreterOf(name string) (interpreter, bool) {
	if in, ok := interpreters[name]; ok {
		return in, true
	}
	for _, base := range []string{"python", "pypy", "perl", "ruby", "php", "lua", "node"} {
		if rest, ok := strings.CutPrefix(name, base); ok && strings.Trim(rest, "0123456789.") == "" {
			if base == "pypy" {
				base = "python"
			}
			return interpreters[base], true
		}
	}
	return interpreter{}, false
}

// optionNames returns the names an option word may stand for: "--x=v"
// and "-x=v" are x (Go's flags take one dash or two), and "-abc" is also
// a, b and c. It returns nil for an operand.
func optionNames(w string) (long string, short string) {
	switch {
	case strings.HasPrefix(w, "--") && len(w) > 2:
		name, _, _ := strings.Cut(w[2:], "=")
		return name, ""
	case strings.HasPrefix(w, "-") && len(w) > 1:
		name, _, _ := strings.Cut(w[1:], "=")
		return name, w[1:]
	}
	return "", ""
}

// inlineCode says how words (an interpreter's command) run code that is
// no file: an inline code option in any spelling, or no script at all
// ("-" or none: the code is read from standard input).
func inlineCode(name string, in interpreter, words []string) string {
	if name == "deno" {
		return denoInline(words)
	}
	noScript := fmt.Sprintf("it runs code from standard input (%s without a script)", name)
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch w {
		case "-":
			return fmt.Sprintf("it runs code from standard input (%s -)", name)
		case "--":
			if i+1 < len(words) {
				return ""
			}
			return noScript
		}
		long, short := optionNames(w)
		if long == "" {
			return "" // the script: what follows is its arguments
		}
		if in.inlineOption(w, long, short) {
			return fmt.Sprintf("it runs inline code (%s %s)", name, w)
		}
		if slices.Contains(in.valued, long) && !strings.Contains(w, "=") {
			i++ // the option's value
		}
	}
	return noScript
}

// denoInline says how deno's words run inline code: its eval and repl
// subcommands; "" otherwise.
func denoInline(words []string) string {
	if len(words) > 1 && (words[1] == "eval" || words[1] == "repl") {
		return "it runs inline code (deno " + words[1] + ")"
	}
	return ""
}

// inlineOption reports whether the option word w (long and short, as
// optionNames reads it) is one of the interpreter's inline code options,
// in its long spelling or among grouped short ones.
func (in interpreter) inlineOption(w, long, short string) bool {
	if slices.Contains(in.long, long) {
		return true
	}
	return !strings.HasPrefix(w, "--") && strings.ContainsAny(short, in.short) && in.short != ""
}

// refusedOption returns the first word of args that is one of the
// options spec refuses, or "".
func refusedOption(spec prefixSpec, args []string) string {
	for _, w := range args {
		if w == "--" {
			return ""
		}
		long, short := optionNames(w)
		if long == "" {
			continue
		}
		if spec.noOptions {
			return w
		}
		for _, r := range spec.refuse {
			if long == r || len(r) == 1 && !strings.HasPrefix(w, "--") && strings.Contains(short, r) {
				return w
			}
		}
	}
	return ""
}

// outputs returns the files words write through spec's output options.
func outputs(spec prefixSpec, args []string) []string {
	var out []string
	for i, w := range args {
		long, _ := optionNames(w)
		if !slices.Contains(spec.writes, long) {
			continue
		}
		if _, v, ok := strings.Cut(w, "="); ok {
			out = append(out, v)
		} else if i+1 < len(args) {
			out = append(out, args[i+1])
		}
	}
	return out
}

// prefixOf returns the prefixable prefix words start with ("go test",
// "ls"), or "".
func prefixOf(words []string) string {
	if len(words) > 1 {
		if _, ok := prefixable[words[0]+" "+words[1]]; ok {
			return words[0] + " " + words[1]
		}
	}
	if _, ok := prefixable[words[0]]; ok {
		return words[0]
	}
	return ""
}

// prefixRefusal says why a prefix rule cannot cover words: the program
// runs its script argument, or an option of words runs code.
func prefixRefusal(words []string) string {
	name := filepath.Base(words[0])
	if scriptIsCode[name] {
		return "no prefix rule covers " + name + ": its arguments can run code"
	}
	for p, spec := range prefixable {
		pw := strings.Fields(p)
		if len(words) >= len(pw) && slices.Equal(words[:len(pw)], pw) {
			if w := refusedOption(spec, words[len(pw):]); w != "" {
				return "it uses " + p + " " + w
			}
		}
	}
	return ""
}

// protectedTarget reports whether path (absolute, or relative to root)
// lies in a .git directory or is a protected configuration file, at any
// depth, symlinks of its existing part resolved.
func protectedTarget(root, path string) bool {
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	for _, p := range []string{filepath.Clean(path), resolveExisting(filepath.Clean(path))} {
		for _, part := range strings.Split(filepath.ToSlash(p), "/") {
			if strings.EqualFold(part, ".git") {
				return true
			}
		}
		if config.IsProtectedIn(root, p) {
			return true
		}
	}
	return false
}
