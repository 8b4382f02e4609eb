package agenthooks

import (
	"os"
	"path/filepath"
	"strings"
)

// A hook's command line is read as the shell will read it, so that trust
// binds the files it runs however they are named: the ways the formats'
// own documentation names a repository's hook script
// ("$CLAUDE_PROJECT_DIR"/…, ${CLAUDE_PROJECT_DIR:-.}/…, Codex's
// "$(git rev-parse --show-toplevel)/…", Copilot's ./…), ~, $HOME, $PWD
// and the hook's own env. What loom cannot know without running something
// (another command's output, a variable it does not know, a glob) leaves
// the command unresolved: [Gate] holds such a repository hook back when
// commands need approval.

// expander expands one hook's command line.
type expander struct {
	h      *Hook
	folder string
	lookup func(string) (string, bool)
	// vars are the command's own assignments (x=…; … $x) whose value
	// loom knows; unknown those whose value it does not.
	vars    map[string]string
	unknown map[string]bool
	// dir is the working directory the words are read in (cd changes
	// it); cd is set when the last command word was cd or pushd.
	dir string
	cd  bool
	// first is set while the next word is a simple command's first.
	first bool
	// words are the expanded words; unresolved names what was not.
	words      []string
	unresolved []string
}

// Resolution is what a hook's command line names, read as the shell reads
// it.
type Resolution struct {
	// Words are its words, expanded (split further at '=', so that
	// --config=x names x), each as a path: a relative one joined to the
	// directory it is read in (the hook's, or where a cd went).
	Words []string
	// Unresolved names each expansion loom cannot evaluate without
	// running something ("$(cat)", "$X", "*.sh"); empty when none.
	Unresolved []string
}

// Expand reads h's command line as bash would, with the variables loom
// gives a hook (CLAUDE_PROJECT_DIR is folder, PWD the hook's directory,
// h.Env) and lookup for the rest of the environment (nil: the process's).
func Expand(h *Hook, folder string, lookup func(string) (string, bool)) Resolution {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	e := &expander{h: h, folder: folder, lookup: lookup, vars: map[string]string{}, unknown: map[string]bool{}, dir: h.Dir}
	e.run(h.Command)
	return Resolution{Words: e.words, Unresolved: e.unresolved}
}

// variable is the value of name, and whether loom knows it.
func (e *expander) variable(name string) (string, bool) {
	if v, ok := e.vars[name]; ok {
		return v, true
	}
	if e.unknown[name] {
		return "", false
	}
	switch name {
	case "CLAUDE_PROJECT_DIR":
		return e.folder, true
	case "PWD":
		return e.h.Dir, true
	case "LOOM_HOOK_EVENT":
		return string(e.h.Event), true
	}
	if v, ok := e.h.Env[name]; ok {
		return v, true
	}
	return e.lookup(name)
}

// word is the word being read.
type word struct {
	text strings.Builder
	// started once a character of the word was read; known while every
	// expansion in it was; glob when it holds a pattern character.
	started, known, glob bool
	// assign is the name being assigned, when the word is NAME=…; what
	// its value could not resolve counts where the name is used: the
	// unresolved past mark are dropped when the word ends.
	assign string
	mark   int
}

// run splits s into simple commands' words and expands them.
func (e *expander) run(s string) {
	w := &word{known: true}
	e.first = true
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			e.endWord(w)
			i++
		case c == '\r' || c == '\n' || strings.IndexByte(";&|()<>", c) >= 0:
			// The end of a simple command: the next word is a command's.
			e.endWord(w)
			e.first, e.cd = true, false
			i++
		case c == '#' && !w.started:
			// A comment runs to the end of the line.
			for i < len(s) && s[i] != '\n' {
				i++
			}
		default:
			i = e.readPart(s, i, w)
		}
	}
	e.endWord(w)
}

// readPart reads the part of a word at s[i] into w (an escaped character,
// a quoted string, an expansion, ~, or a plain character) and returns the
// index after it.
func (e *expander) readPart(s string, i int, w *word) int {
	c := s[i]
	if !w.started && isName(c, true) {
		e.startAssignment(s[i:], w)
	}
	started := w.started
	w.started = true
	switch {
	case c == '\\':
		if i+1 < len(s) {
			w.text.WriteByte(s[i+1])
		}
		return i + 2
	case c == '\'':
		return singleQuoted(s, i, w)
	case c == '"':
		return e.double(s, i+1, &w.text, &w.known)
	case c == '$' || c == '`':
		v, n, ok := e.dollar(s, i)
		w.text.WriteString(v)
		w.known = w.known && ok
		return i + n
	case c == '~' && !started:
		return e.tilde(s, i, w)
	}
	w.glob = w.glob || strings.IndexByte("*?[", c) >= 0
	w.text.WriteByte(c)
	return i + 1
}

// singleQuoted reads the single-quoted string at s[i] (an unclosed one
// runs to the end) into w and returns the index after it.
func singleQuoted(s string, i int, w *word) int {
	j := strings.IndexByte(s[i+1:], '\'')
	if j < 0 {
		j = len(s) - i - 1
	}
	w.text.WriteString(s[i+1 : i+1+j])
	return i + j + 2
}

// tilde reads the ~ at s[i], the start of a word, into w: $HOME when it
// is known and the ~ stands alone or before a '/', else a plain ~.
func (e *expander) tilde(s string, i int, w *word) int {
	if home, ok := e.variable("HOME"); ok && (i+1 == len(s) || s[i+1] == '/') {
		w.text.WriteString(home)
	} else {
		w.text.WriteByte('~')
	}
	return i + 1
}

// startAssignment notes, at the start of a word, a NAME=value: an
// assignment the rest of the line reads.
func (e *expander) startAssignment(s string, w *word) {
	j := 0
	for j < len(s) && isName(s[j], j > 0) {
		j++
	}
	if j < len(s) && s[j] == '=' && j > 0 {
		w.assign, w.mark = s[:j], len(e.unresolved)
	}
}

// endWord ends the word being read, if any: an assignment records its
// variable, a cd's argument moves the directory, and a known word joins
// the words (split at '=', each part as a path).
func (e *expander) endWord(w *word) {
	if !w.started {
		return
	}
	text := w.text.String()
	if w.glob && text != "[" && text != "[[" {
		e.unresolved = append(e.unresolved, "a pattern ("+text+")")
	}
	if w.assign != "" {
		e.assigned(w, text)
	}
	switch {
	case e.cd && !w.known:
		e.unresolved = append(e.unresolved, "cd "+text)
	case e.cd:
		e.dir = e.path(text)
	}
	e.cd = e.first && (text == "cd" || text == "pushd")
	if w.assign == "" {
		e.first = false
	}
	if w.known {
		for _, p := range strings.Split(text, "=") {
			if p != "" {
				e.words = append(e.words, e.path(p))
			}
		}
	}
	*w = word{known: true}
}

// assigned records the variable the word assigns: its value when loom
// knows it (what it could not resolve then no longer counts here), else
// the name as unknown.
func (e *expander) assigned(w *word, text string) {
	e.unresolved = e.unresolved[:w.mark]
	if w.known {
		e.vars[w.assign] = strings.TrimPrefix(text, w.assign+"=")
		delete(e.unknown, w.assign)
	} else {
		e.unknown[w.assign] = true
		delete(e.vars, w.assign)
	}
}

// double reads a double-quoted string from s[i:], up to its closing quote,
// into cur; it returns the index after the quote.
func (e *expander) double(s string, i int, cur *strings.Builder, known *bool) int {
	for i < len(s) {
		switch c := s[i]; {
		case c == '"':
			return i + 1
		case c == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0:
			cur.WriteByte(s[i+1])
			i += 2
		case c == '$' || c == '`':
			v, n, ok := e.dollar(s, i)
			cur.WriteString(v)
			*known = *known && ok
			i += n
		default:
			cur.WriteByte(c)
			i++
		}
	}
	return i
}

// dollar expands the $… or `…` at s[i]: its value, its length in s, and
// whether loom knows the value (an unknown one is recorded).
func (e *expander) dollar(s string, i int) (string, int, bool) {
	if s[i] == '`' {
		j := strings.IndexByte(s[i+1:], '`')
		if j < 0 {
			j = len(s) - i - 1
		}
		v, ok := e.substitution(s[i+1 : i+1+j])
		return v, j + 2, ok
	}
	if i+1 >= len(s) {
		return "$", 1, true
	}
	switch c := s[i+1]; {
	case c == '(':
		body, n := balanced(s[i+1:], '(', ')')
		if strings.HasPrefix(body, "(") {
			e.unresolved = append(e.unresolved, "$(("+strings.TrimPrefix(body, "(")+")")
			return "", n + 1, false
		}
		v, ok := e.substitution(body)
		return v, n + 1, ok
	case c == '{':
		body, n := balanced(s[i+1:], '{', '}')
		v, ok := e.braced(body)
		return v, n + 1, ok
	case isName(c, false):
		j := i + 1
		for j < len(s) && isName(s[j], true) {
			j++
		}
		name := s[i+1 : j]
		v, ok := e.variable(name)
		if !ok {
			e.unresolved = append(e.unresolved, "$"+name)
		}
		return v, j - i, ok
	case strings.IndexByte("0123456789@*#?$!-", c) >= 0:
		e.unresolved = append(e.unresolved, "$"+string(c))
		return "", 2, false
	}
	return "$", 1, true
}

// braced expands ${…}: ${X}, ${X:-word}, ${X-word}, ${X:=word},
// ${X=word}; anything else is unresolved.
func (e *expander) braced(body string) (string, bool) {
	j := 0
	for j < len(body) && isName(body[j], j > 0) {
		j++
	}
	name, rest := body[:j], body[j:]
	if name == "" {
		e.unresolved = append(e.unresolved, "${"+body+"}")
		return "", false
	}
	v, ok := e.variable(name)
	if rest == "" {
		if !ok {
			e.unresolved = append(e.unresolved, "${"+body+"}")
		}
		return v, ok
	}
	for _, op := range []string{":-", ":=", "-", "="} {
		word, has := strings.CutPrefix(rest, op)
		if !has {
			continue
		}
		if ok && (v != "" || !strings.HasPrefix(op, ":")) {
			return v, true
		}
		var b strings.Builder
		known := true
		e.double(word+`"`, 0, &b, &known)
		if !known {
			return "", false
		}
		return b.String(), true
	}
	e.unresolved = append(e.unresolved, "${"+body+"}")
	return "", false
}

// substitution is the output of $(cmd) when loom knows it without running
// anything: the repository's top (git rev-parse --show-toplevel) and the
// working directory (pwd).
func (e *expander) substitution(cmd string) (string, bool) {
	switch strings.Join(strings.Fields(cmd), " ") {
	case "git rev-parse --show-toplevel":
		return toplevel(e.h.Dir, e.folder), true
	case "pwd":
		return e.h.Dir, true
	}
	e.unresolved = append(e.unresolved, "$("+strings.TrimSpace(cmd)+")")
	return "", false
}

// path is word as a path read in the current directory.
func (e *expander) path(word string) string {
	if filepath.IsAbs(word) {
		return filepath.Clean(word)
	}
	return filepath.Join(e.dir, word)
}

// toplevel is the directory of the repository dir is in: the nearest of
// its parents (dir included) holding .git; folder when none does.
func toplevel(dir, folder string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return folder
		}
	}
}

// balanced returns what s (starting with open) holds up to its matching
// close, and the length read including both.
func balanced(s string, open, close byte) (string, int) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return s[1:i], i + 1
			}
		}
	}
	return s[1:], len(s)
}

func isName(c byte, digits bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || digits && c >= '0' && c <= '9'
}
