// Package agentfiles reads the files the field's agents share to shape
// an agent without forking it: Agent Skills (SKILL.md, the open spec
// that Codex, Claude Code, VS Code, Gemini CLI, opencode and Zed read)
// and custom commands / prompt files (Claude Code's .claude/commands,
// VS Code's .github/prompts, Codex's ~/.codex/prompts, loom's own), and
// agent definitions for subagents (.claude/agents/*.md,
// .codex/agents/*.toml, .github/agents/*.agent.md, loom's own: see
// agents.go).
//
// It only reads and parses: what a skill's body says reaches the model
// when the model asks for it (progressive disclosure), and a command is
// text the user's prompt expands to. Nothing here runs anything.
package agentfiles

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// SkillFile is a skill's file name.
const SkillFile = "SKILL.md"

// maxSkillBytes bounds a SKILL.md read (the spec advises bodies under
// 5,000 words).
const maxSkillBytes = 256 << 10

// Skill is one Agent Skill.
type Skill struct {
	// Name is the skill's name (front matter), unique among the skills.
	Name string `json:"name"`
	// Description says what it does and when to use it (front matter).
	Description string `json:"description"`
	// Path is its SKILL.md, absolute; Dir its directory, which holds its
	// bundled files.
	Path string `json:"path"`
	Dir  string `json:"-"`
	// Scope is "repository" or "user".
	Scope string `json:"scope"`
	// UserInvocable: the user may call it as /name (front matter
	// user-invocable, default true as in Claude Code).
	UserInvocable bool `json:"userInvocable"`
}

// Problem is a file that was not taken, with why.
type Problem struct {
	Path   string `json:"path"`
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Reason)
	}
	return p.Path + ": " + p.Reason
}

// SkillDirs are where skills are looked for: the repository's, then the
// user's (home-relative). A user's skill wins over a repository's of the
// same name (the user's word), and the other is named as a problem.
var (
	RepositorySkillDirs = []string{".agents/skills", ".claude/skills"}
	UserSkillDirs       = []string{".agents/skills", ".claude/skills"}
)

var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Skills finds the skills of folder and of the user whose home is home
// ("" for none).
func Skills(folder, home string) ([]Skill, []Problem) {
	var found []Skill
	var problems []Problem
	byName := map[string]int{}
	look := func(root, scope string) {
		entries, err := os.ReadDir(root)
		if err != nil {
			return
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			path := filepath.Join(root, e.Name(), SkillFile)
			s, prob, ok := readSkill(path, e.Name(), scope)
			if prob != nil {
				problems = append(problems, *prob)
			}
			if !ok {
				continue
			}
			if i, dup := byName[s.Name]; dup {
				kept := found[i]
				if scope == "user" && kept.Scope == "repository" {
					found[i] = s
					problems = append(problems, Problem{Path: kept.Path, Reason: fmt.Sprintf("skill %q is also the user's (%s): the user's is used", s.Name, s.Path)})
				} else {
					problems = append(problems, Problem{Path: s.Path, Reason: fmt.Sprintf("skill %q is already defined by %s", s.Name, kept.Path)})
				}
				continue
			}
			byName[s.Name] = len(found)
			found = append(found, s)
		}
	}
	for _, d := range RepositorySkillDirs {
		look(filepath.Join(folder, d), "repository")
	}
	if home != "" {
		for _, d := range UserSkillDirs {
			look(filepath.Join(home, d), "user")
		}
	}
	slices.SortFunc(found, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return found, problems
}

// readSkill reads one SKILL.md: a problem for a file that exists but is
// not a valid skill; ok when it is one.
func readSkill(path, dirName, scope string) (Skill, *Problem, bool) {
	st, err := os.Lstat(path)
	if err != nil {
		if !os.IsNotExist(err) {
			return Skill{}, &Problem{Path: path, Reason: err.Error()}, false
		}
		return Skill{}, nil, false
	}
	if !st.Mode().IsRegular() {
		return Skill{}, &Problem{Path: path, Reason: "not a regular file"}, false
	}
	if st.Size() > maxSkillBytes {
		return Skill{}, &Problem{Path: path, Reason: fmt.Sprintf("%d bytes, over the %d-byte limit", st.Size(), maxSkillBytes)}, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Skill{}, &Problem{Path: path, Reason: err.Error()}, false
	}
	meta, _, line, err := FrontMatter(string(data))
	if err != nil {
		return Skill{}, &Problem{Path: path, Line: line, Reason: err.Error()}, false
	}
	s := Skill{Name: meta["name"], Description: meta["description"], Path: path, Dir: filepath.Dir(path), Scope: scope, UserInvocable: meta["user-invocable"] != "false"}
	switch {
	case s.Name == "":
		return Skill{}, &Problem{Path: path, Line: 1, Reason: "the front matter has no name"}, false
	case len(s.Name) > 64 || !skillName.MatchString(s.Name):
		return Skill{}, &Problem{Path: path, Line: 1, Reason: fmt.Sprintf("name %q: want 1-64 lowercase letters, digits and single hyphens", s.Name)}, false
	case s.Name != dirName:
		return Skill{}, &Problem{Path: path, Line: 1, Reason: fmt.Sprintf("name %q differs from its directory %q", s.Name, dirName)}, false
	case s.Description == "":
		return Skill{}, &Problem{Path: path, Line: 1, Reason: "the front matter has no description"}, false
	case len(s.Description) > 1024:
		return Skill{}, &Problem{Path: path, Line: 1, Reason: fmt.Sprintf("description of %d characters, over 1024", len(s.Description))}, false
	}
	return s, nil, true
}

// Body is the skill's instructions: SKILL.md without its front matter,
// and the list of its bundled files.
func (s Skill) Body() (string, []string, error) {
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return "", nil, err
	}
	_, body, _, err := FrontMatter(string(data))
	if err != nil {
		return "", nil, err
	}
	var files []string
	_ = filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == s.Dir {
			return nil
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && p != s.Path && len(files) < 200 {
			rel, _ := filepath.Rel(s.Dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return strings.TrimSpace(body), files, nil
}

// FrontMatter splits a Markdown file into its YAML front matter (the
// simple "key: value" lines the formats use; folded ">"/"|" blocks and
// quoted values read too) and its body. A file without front matter has
// an empty map. line is where an error is.
func FrontMatter(text string) (meta map[string]string, body string, line int, err error) {
	text = strings.TrimPrefix(text, "\ufeff")
	if !strings.HasPrefix(text, "---\n") && !strings.HasPrefix(text, "---\r\n") {
		return map[string]string{}, text, 0, nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, maxSkillBytes)
	sc.Scan() // ---
	n, consumed := 1, len(sc.Text())+1
	fm := frontMatter{meta: map[string]string{}}
	for sc.Scan() {
		n++
		l := sc.Text()
		consumed += len(l) + 1
		if strings.TrimRight(l, "\r") == "---" {
			fm.endBlock()
			return fm.meta, text[min(consumed, len(text)):], 0, nil
		}
		if err := fm.read(l); err != nil {
			return nil, "", n, err
		}
	}
	return nil, "", n, fmt.Errorf("the front matter is not closed by a --- line")
}

// frontMatter is the front matter read so far.
type frontMatter struct {
	meta map[string]string
	// key is the last key read; block, when not nil, the lines of its
	// folded or literal block value (key: > or key: |).
	key   string
	block []string
}

// endBlock ends the block value being read, if any: its lines, joined.
func (fm *frontMatter) endBlock() {
	if fm.key != "" && fm.block != nil {
		fm.meta[fm.key] = strings.TrimSpace(strings.Join(fm.block, " "))
	}
	fm.block = nil
}

// read reads one line: a block value's line, a "key: value", or a line
// that is skipped (blank, a comment, a nested value).
func (fm *frontMatter) read(l string) error {
	indented := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
	trimmed := strings.TrimSpace(l)
	if fm.block != nil && (indented || trimmed == "") {
		fm.block = append(fm.block, trimmed)
		return nil
	}
	fm.endBlock()
	if indented || skippedLine(l) {
		return nil // a nested value (metadata maps), or skippedLine
	}
	k, v, ok := strings.Cut(l, ":")
	if !ok {
		return fmt.Errorf("front matter line %q is not \"key: value\"", l)
	}
	fm.key = strings.TrimSpace(k)
	fm.value(strings.TrimSpace(strings.TrimRight(v, "\r")))
	return nil
}

// blockStarts are the values that start a folded or literal block.
var blockStarts = map[string]bool{">": true, "|": true, ">-": true, "|-": true}

// value reads the value v of the key just read: the start of a block,
// a quoted string (its quotes dropped) or a plain one.
func (fm *frontMatter) value(v string) {
	switch {
	case blockStarts[v]:
		fm.block = []string{}
	case quoted(v, '"') || quoted(v, '\''):
		fm.meta[fm.key] = v[1 : len(v)-1]
	default:
		fm.meta[fm.key] = v
	}
}

// quoted reports whether v is enclosed in a pair of quote characters q.
func quoted(v string, q byte) bool { return len(v) >= 2 && v[0] == q && v[len(v)-1] == q }

// skippedLine reports whether l (not indented) is not read: blank, a
// comment, or a list item (allowed-tools lists).
func skippedLine(l string) bool {
	trimmed := strings.TrimSpace(l)
	return trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(l, "-")
}

// Listing is the block of the system prompt that tells the model which
// skills there are: names and descriptions only, within budget bytes.
// omitted names the skills left out for the budget.
func Listing(skills []Skill, budget int) (text string, omitted []string) {
	if len(skills) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString("\n\n## Skills\nThese skills are available. When a task matches a skill's description, call the `skill` tool with its name first, and follow the instructions it returns (its bundled files are read with the same tool).\n")
	for _, s := range skills {
		line := fmt.Sprintf("- %s: %s\n", s.Name, oneLine(s.Description))
		if b.Len()+len(line) > budget {
			omitted = append(omitted, s.Name)
			continue
		}
		b.WriteString(line)
	}
	if len(omitted) > 0 {
		names := omitted[:min(len(omitted), 5)]
		more := ""
		if len(omitted) > len(names) {
			more = ", …"
		}
		fmt.Fprintf(&b, "(%d more skills not listed for space: %s%s)\n", len(omitted), strings.Join(names, ", "), more)
	}
	return b.String(), omitted
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
