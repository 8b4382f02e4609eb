package agentfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/loom-lsp/loom-lsp/tools"
)

// Gemini CLI's custom commands are TOML files (.gemini/commands/*.toml;
// the user's in ~/.gemini/commands or ~/.config/gemini-cli/commands):
// a required prompt, an optional description. In the prompt, {{args}}
// is what the user typed after the name; without it, the whole command
// typed is appended after a blank line. @{path} is a file of the folder,
// read when the command is called; !{command} runs a shell command when
// the command is called, which loom does not do: such a file is named as
// a problem and not offered.
const geminiSuffix = ".toml"

// geminiCommand is one .toml command file.
type geminiCommand struct {
	Prompt      *string `toml:"prompt"`
	Description string  `toml:"description"`
}

// readGeminiCommand reads a Gemini CLI command file; data is its bytes.
func readGeminiCommand(path, name, scope string, data []byte) (Command, *Problem) {
	var gc geminiCommand
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&gc)
	if err != nil {
		line := 0
		var perr toml.ParseError
		if errors.As(err, &perr) {
			line = perr.Position.Line
			err = errors.New(perr.Message)
		}
		return Command{}, &Problem{Path: path, Line: line, Reason: err.Error()}
	}
	if gc.Prompt == nil {
		return Command{}, &Problem{Path: path, Line: 1, Reason: "no prompt: a Gemini CLI command needs one"}
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return Command{}, &Problem{Path: path, Line: 1, Reason: fmt.Sprintf("unknown key %q (a Gemini CLI command has prompt and description)", undecoded[0].String())}
	}
	if strings.Contains(*gc.Prompt, "!{") {
		return Command{}, &Problem{Path: path, Reason: "the prompt runs shell commands when it is called (!{…}), which loom does not do: not offered"}
	}
	return Command{Name: name, Description: gc.Description, Path: path, Scope: scope, template: strings.TrimSpace(*gc.Prompt), gemini: true}, nil
}

// maxInjectedBytes bounds a file @{path} brings into a prompt.
const maxInjectedBytes = 256 << 10

// expandGemini is Gemini CLI's expansion: @{path} files first, then
// {{args}}, or the command typed appended when the prompt has none.
func (c Command) expandGemini(args string) (string, error) {
	text, err := injectFiles(c.template, c.folder)
	if err != nil {
		return "", fmt.Errorf("/%s: %w", c.Name, err)
	}
	if strings.Contains(text, "{{args}}") {
		return strings.ReplaceAll(text, "{{args}}", args), nil
	}
	if args != "" {
		text += "\n\n/" + c.Name + " " + args
	}
	return text, nil
}

// injectFiles replaces each @{path} with the text of that file of the
// folder, resolved like the tools' paths (nothing outside the folder).
func injectFiles(text, folder string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(text, "@{")
		if i < 0 {
			b.WriteString(text)
			return b.String(), nil
		}
		j := closingBrace(text, i+2)
		if j < 0 {
			return "", fmt.Errorf("@{ is not closed")
		}
		rel := strings.TrimSpace(text[i+2 : j])
		content, err := readInjected(folder, rel)
		if err != nil {
			return "", fmt.Errorf("@{%s}: %w", rel, err)
		}
		b.WriteString(text[:i])
		b.WriteString(content)
		text = text[j+1:]
	}
}

// closingBrace is the index of the brace that closes the one opened
// before from (braces inside balance), or -1.
func closingBrace(text string, from int) int {
	depth := 1
	for k := from; k < len(text); k++ {
		switch text[k] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

func readInjected(folder, rel string) (string, error) {
	if folder == "" {
		return "", errors.New("no folder to read it from")
	}
	path, err := tools.Resolve(folder, rel)
	if err != nil {
		return "", err
	}
	// Opened as resolved: a directory of path swapped for a symbolic link
	// since leads nowhere (tools.OpenResolved).
	f, err := tools.OpenResolved(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return "", err
	case !st.Mode().IsRegular():
		return "", errors.New("not a file (loom injects files, not directories)")
	case st.Size() > maxInjectedBytes:
		return "", fmt.Errorf("%d bytes, over the %d-byte limit", st.Size(), maxInjectedBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxInjectedBytes))
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", errors.New("a binary file")
	}
	return string(data), nil
}
