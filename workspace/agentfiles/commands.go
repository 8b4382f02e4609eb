package agentfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// maxCommandBytes bounds a command file read.
const maxCommandBytes = 64 << 10

// Command is a custom command: a prompt the user calls as /name args.
type Command struct {
	// Name is what follows the slash ("review", "frontend:component").
	Name string `json:"name"`
	// Description and ArgumentHint come from the front matter.
	Description  string `json:"description,omitempty"`
	ArgumentHint string `json:"argumentHint,omitempty"`
	// Path is the file it comes from; Scope "repository" or "user" ("mcp"
	// for an MCP server's prompt, which has no file).
	Path  string `json:"path"`
	Scope string `json:"scope"`
	// template is the body, with $ARGUMENTS, $1… to fill.
	template string
	// skill is set for a user-invocable skill.
	skill *Skill
	// gemini: a Gemini CLI command (TOML; {{args}}, @{path}); folder is
	// where its @{path} files are read.
	gemini bool
	folder string
}

// commandDir is a place commands are read from: a directory and the
// file-name suffix that makes a file a command there.
type commandDir struct {
	dir, suffix string
	// nested: subdirectories give names "sub:name" (Claude Code).
	nested bool
}

// RepositoryCommandDirs and UserCommandDirs are where commands are read;
// the first of a name wins, and the user's win over the repository's.
var (
	RepositoryCommandDirs = []commandDir{{".loom/commands", ".md", true}, {".claude/commands", ".md", true}, {".github/prompts", ".prompt.md", false}, {".gemini/commands", geminiSuffix, true}}
	UserCommandDirs       = []commandDir{{".config/loom/commands", ".md", true}, {".claude/commands", ".md", true}, {".codex/prompts", ".md", false}, {".gemini/commands", geminiSuffix, true}, {".config/gemini-cli/commands", geminiSuffix, true}}
)

var commandName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)

// Commands finds the custom commands of folder and of the user whose
// home is home, and the user-invocable skills as commands too.
func Commands(folder, home string, skills []Skill) ([]Command, []Problem) {
	set := commandSet{folder: folder, byName: map[string]int{}}
	for _, cd := range RepositoryCommandDirs {
		set.read(folder, cd, "repository")
	}
	if home != "" {
		for _, cd := range UserCommandDirs {
			set.read(home, cd, "user")
		}
	}
	for _, s := range skills {
		if s.UserInvocable {
			set.add(Command{Name: s.Name, Description: s.Description, Path: s.Path, Scope: s.Scope, skill: &s})
		}
	}
	slices.SortFunc(set.found, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return set.found, set.problems
}

// commandSet gathers the commands found, one per name, and the
// problems met.
type commandSet struct {
	folder   string
	found    []Command
	problems []Problem
	byName   map[string]int // index in found
}

// add adds c, unless its name is taken: then the user's command replaces
// the repository's (said as a problem), else the first one stays.
func (s *commandSet) add(c Command) {
	if i, dup := s.byName[c.Name]; dup {
		kept := s.found[i]
		if c.Scope == "user" && kept.Scope == "repository" {
			s.found[i] = c
			s.problems = append(s.problems, Problem{Path: kept.Path, Reason: fmt.Sprintf("command /%s is also the user's (%s): the user's is used", c.Name, c.Path)})
		}
		return
	}
	s.byName[c.Name] = len(s.found)
	s.found = append(s.found, c)
}

// read adds the commands of the directory cd under root, of scope.
func (s *commandSet) read(root string, cd commandDir, scope string) {
	base := filepath.Join(root, cd.dir)
	_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != base && !cd.nested {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), cd.suffix) {
			return nil
		}
		rel, _ := filepath.Rel(base, p)
		name := strings.ReplaceAll(filepath.ToSlash(strings.TrimSuffix(rel, cd.suffix)), "/", ":")
		c, prob := readCommand(p, name, scope)
		if prob != nil {
			s.problems = append(s.problems, *prob)
			return nil
		}
		c.folder = s.folder
		s.add(c)
		return nil
	})
}

func readCommand(path, name, scope string) (Command, *Problem) {
	if !commandName.MatchString(name) {
		return Command{}, &Problem{Path: path, Reason: fmt.Sprintf("%q is not a command name (letters, digits, - _ . :)", name)}
	}
	st, err := os.Stat(path)
	if err != nil {
		return Command{}, &Problem{Path: path, Reason: err.Error()}
	}
	if st.Size() > maxCommandBytes {
		return Command{}, &Problem{Path: path, Reason: fmt.Sprintf("%d bytes, over the %d-byte limit", st.Size(), maxCommandBytes)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Command{}, &Problem{Path: path, Reason: err.Error()}
	}
	if strings.HasSuffix(path, geminiSuffix) {
		return readGeminiCommand(path, name, scope, data)
	}
	meta, body, line, err := FrontMatter(string(data))
	if err != nil {
		return Command{}, &Problem{Path: path, Line: line, Reason: err.Error()}
	}
	return Command{Name: name, Description: meta["description"], ArgumentHint: meta["argument-hint"], Path: path, Scope: scope, template: strings.TrimSpace(body)}, nil
}

var positional = regexp.MustCompile(`\$([1-9])`)

// Expand is the prompt /name args stands for: $ARGUMENTS is args, $1…$9
// its words (quotes group words); a command that uses neither gets the
// arguments appended. A skill called as a command is its instructions
// followed by the arguments; a Gemini CLI command is expanded as Gemini
// CLI does (expandGemini).
func (c Command) Expand(args string) (string, error) {
	args = strings.TrimSpace(args)
	if c.skill != nil {
		body, _, err := c.skill.Body()
		if err != nil {
			return "", fmt.Errorf("/%s: %w", c.Name, err)
		}
		text := fmt.Sprintf("Use the skill %q (%s). Its instructions:\n\n%s", c.skill.Name, c.skill.Path, body)
		if args != "" {
			text += "\n\nThe task: " + args
		}
		return text, nil
	}
	if c.gemini {
		return c.expandGemini(args)
	}
	words := splitWords(args)
	used := false
	text := positional.ReplaceAllStringFunc(c.template, func(m string) string {
		used = true
		i, _ := strconv.Atoi(m[1:])
		if i <= len(words) {
			return words[i-1]
		}
		return ""
	})
	if strings.Contains(text, "$ARGUMENTS") {
		used = true
		text = strings.ReplaceAll(text, "$ARGUMENTS", args)
	}
	if !used && args != "" {
		text += "\n\nARGUMENTS: " + args
	}
	return text, nil
}

// splitWords splits args at spaces, keeping quoted groups whole.
func splitWords(args string) []string {
	var words []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range args {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote, inWord = r, true
		case quote == 0 && (r == ' ' || r == '\t' || r == '\n'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// slashCall matches a prompt that calls a command: "/name" alone or
// followed by a space; a path such as /usr/bin/env does not.
var slashCall = regexp.MustCompile(`^/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+([\s\S]*))?$`)

// ParseCall splits a prompt that calls a command into its name and
// arguments; ok is false for any other prompt.
func ParseCall(prompt string) (name, args string, ok bool) {
	m := slashCall.FindStringSubmatch(strings.TrimSpace(prompt))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}
