package completion

import (
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/internal/lsppos"
)

// bytesPerToken is the estimate of a token's size in source text.
const bytesPerToken = 4

// Window is the text around the cursor sent to the model.
type Window struct {
	// Prefix is the text before the cursor: whole lines (as many as the
	// budget holds) and the cursor's line up to the cursor.
	Prefix string
	// Suffix is the text after the cursor: the rest of its line and
	// whole lines after it, as many as the budget holds.
	Suffix string
	// Multiline: the completion may span several lines (see Multiline).
	Multiline bool
}

// NewWindow cuts the window around pos (UTF-16, as LSP counts) out of
// text, within budget tokens: three quarters before the cursor, a
// quarter after. The lines before the cursor's line are chosen from the
// text before that line alone, so that typing on the line only grows the
// prefix (and the cache serves typing through a suggestion).
func NewWindow(text string, pos lsppos.Position, budget int) (Window, error) {
	off, err := lsppos.Offset(text, pos)
	if err != nil {
		return Window{}, err
	}
	before, after := budget*bytesPerToken*3/4, budget*bytesPerToken/4
	lineStart := strings.LastIndexByte(text[:off], '\n') + 1
	start := lineStart - before
	if start <= 0 {
		start = 0
	} else if i := strings.IndexByte(text[start:lineStart], '\n'); i >= 0 {
		start += i + 1 // whole lines only
	} else {
		start = lineStart
	}
	if off-start > before+before/2 {
		// One huge line: keep its end, on a rune boundary.
		start = off - before
		for start < off && !utf8.RuneStart(text[start]) {
			start++
		}
	}
	lineEnd := len(text)
	if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
		lineEnd = off + i + 1
	}
	end := lineEnd + after
	if end >= len(text) {
		end = len(text)
	} else if i := strings.LastIndexByte(text[lineEnd:end], '\n'); i >= 0 {
		end = lineEnd + i + 1
	} else {
		end = lineEnd
	}
	if end-off > after+after/2 {
		end = off + after
		for end > off && !utf8.RuneStart(text[end]) {
			end--
		}
	}
	w := Window{Prefix: text[start:off], Suffix: text[off:end]}
	w.Multiline = Multiline(text[lineStart:off], text[off:lineEnd])
	return w, nil
}

// Multiline reports whether a completion at the cursor may span several
// lines, from the cursor's line: before is its text before the cursor,
// after the rest of it. It may on an empty (or blank) line, and after a
// block opener ("{", "(", "[", ":", "=>", "do", "then") with nothing but
// closers after the cursor; mid-line, the completion ends the line.
func Multiline(before, after string) bool {
	rest := strings.TrimSpace(after)
	if strings.Trim(rest, ")]}>;,'\"`") != "" {
		return false // text follows the cursor on its line
	}
	b := strings.TrimRight(before, " \t")
	if strings.TrimSpace(b) == "" {
		return true
	}
	for _, opener := range []string{"{", "(", "[", ":", "=>", " do", " then", "->"} {
		if strings.HasSuffix(b, opener) {
			return true
		}
	}
	return false
}

// languages maps file extensions to the language names models know.
var languages = map[string]string{
	".go": "go", ".py": "python", ".js": "javascript", ".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript",
	".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".java": "java", ".kt": "kotlin",
	".rb": "ruby", ".php": "php", ".cs": "csharp", ".swift": "swift", ".lua": "lua", ".sh": "shell", ".bash": "shell",
	".md": "markdown", ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".html": "html", ".css": "css",
	".sql": "sql", ".zig": "zig", ".ex": "elixir", ".exs": "elixir", ".hs": "haskell", ".ml": "ocaml", ".scala": "scala",
}

// Language names the language of the file at path ("" when unknown).
func Language(path string) string {
	return languages[strings.ToLower(filepath.Ext(path))]
}
