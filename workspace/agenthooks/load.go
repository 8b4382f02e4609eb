package agenthooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/loom-lsp/loom-lsp/workspace/agentfiles"
)

// Event is a hook event, by Claude Code's name (the other formats' names
// map onto these).
type Event string

// The events loom fires.
const (
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	UserPromptSubmit Event = "UserPromptSubmit"
	Stop             Event = "Stop"
	SessionStart     Event = "SessionStart"
	PreCompact       Event = "PreCompact"
	Notification     Event = "Notification"
)

// Events are the events loom fires, in a stable order.
var Events = []Event{PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, PreCompact, Notification}

// Format is the file format a hook was read from; it decides the input's
// field names and how the output is read.
type Format string

// The formats.
const (
	FormatClaude  Format = "claude"
	FormatCodex   Format = "codex"
	FormatVSCode  Format = "vscode"
	FormatCopilot Format = "copilot" // .github/hooks with camelCase events
	FormatLoom    Format = "loom"
)

// Scopes of a hook.
const (
	ScopeRepository = "repository"
	ScopeUser       = "user"
)

// Default timeouts, per format (the formats' own defaults).
const (
	DefaultTimeout        = 60 * time.Second
	DefaultCopilotTimeout = 30 * time.Second
	// MaxTimeout bounds any hook's timeout.
	MaxTimeout = 10 * time.Minute
)

// Hook is one command hook.
type Hook struct {
	Event Event
	// Matcher selects the tools (tool events) or sources (SessionStart,
	// PreCompact) it runs for: "" or "*" for all, else a regular
	// expression matched against the whole name.
	Matcher string
	re      *regexp.Regexp
	// Command is run with bash -c.
	Command string
	// Timeout is how long it may run before it is killed.
	Timeout time.Duration
	// Dir is its working directory (absolute); Env adds variables.
	Dir string
	Env map[string]string
	// Source is the file that defines it and Line where; Format and
	// Scope say which kind of file.
	Source string
	Line   int
	Format Format
	Scope  string
}

// Name is how the hook is named to people: where it is defined, its
// event and its command.
func (h *Hook) Name() string {
	cmd := h.Command
	if len(cmd) > 80 {
		cmd = cmd[:80] + "…"
	}
	return fmt.Sprintf("%s:%d %s: %s", h.Source, h.Line, h.Event, cmd)
}

// Set is the hooks of a folder and its user, repository hooks first.
type Set struct {
	Hooks []*Hook
}

// Empty reports whether there are no hooks.
func (s *Set) Empty() bool { return s == nil || len(s.Hooks) == 0 }

// Has reports whether a hook is defined for ev.
func (s *Set) Has(ev Event) bool {
	if s == nil {
		return false
	}
	for _, h := range s.Hooks {
		if h.Event == ev {
			return true
		}
	}
	return false
}

// For returns the hooks of ev whose matcher selects name (a loom tool
// name for tool events, a source for SessionStart and PreCompact, ignored
// for the others), in definition order.
func (s *Set) For(ev Event, name string) []*Hook {
	if s == nil {
		return nil
	}
	var out []*Hook
	for _, h := range s.Hooks {
		if h.Event == ev && h.matches(name) {
			out = append(out, h)
		}
	}
	return out
}

func (h *Hook) matches(name string) bool {
	if h.re == nil {
		return true
	}
	switch h.Event {
	case PreToolUse, PostToolUse:
		for _, n := range ToolAliases(name, h.Format) {
			if h.re.MatchString(n) {
				return true
			}
		}
		return false
	case SessionStart, PreCompact, Notification:
		return h.re.MatchString(name)
	}
	return true
}

// compileMatcher sets h.re from h.Matcher; "" and "*" match everything.
func (h *Hook) compileMatcher() error {
	m := strings.TrimSpace(h.Matcher)
	if m == "" || m == "*" {
		return nil
	}
	re, err := regexp.Compile("^(?:" + m + ")$")
	if err != nil {
		return fmt.Errorf("matcher %q is not a regular expression: %v", h.Matcher, err)
	}
	h.re = re
	return nil
}

// maxHooksFile bounds a hooks file read.
const maxHooksFile = 1 << 20

// Load reads the hooks of folder and of the user whose home is home ("" for
// none); userDir is loom's user configuration directory ("" for none).
// A file that cannot be read as hooks is a problem naming file:line and
// why; the other files' hooks still load. Events loom does not fire, and
// hooks that are not commands, are problems too (said, not run).
func Load(folder, home, userDir string) (*Set, []agentfiles.Problem) {
	l := &loader{}
	repo := func(rel string, f Format) { l.jsonFile(filepath.Join(folder, rel), folder, f, ScopeRepository) }
	repo(".claude/settings.json", FormatClaude)
	repo(".claude/settings.local.json", FormatClaude)
	repo(".codex/hooks.json", FormatCodex)
	l.codexTOML(filepath.Join(folder, ".codex", "config.toml"), folder, ScopeRepository)
	matches, _ := filepath.Glob(filepath.Join(folder, ".github", "hooks", "*.json"))
	sort.Strings(matches)
	for _, m := range matches {
		l.jsonFile(m, folder, FormatVSCode, ScopeRepository)
	}
	repo(".loom/hooks.json", FormatLoom)
	if home != "" {
		user := func(path string, f Format) { l.jsonFile(path, folder, f, ScopeUser) }
		user(filepath.Join(home, ".claude", "settings.json"), FormatClaude)
		user(filepath.Join(home, ".codex", "hooks.json"), FormatCodex)
		l.codexTOML(filepath.Join(home, ".codex", "config.toml"), folder, ScopeUser)
	}
	if userDir != "" {
		l.jsonFile(filepath.Join(userDir, "hooks.json"), folder, FormatLoom, ScopeUser)
	}
	return &Set{Hooks: l.hooks}, l.problems
}

// Files are the hook files of fixed names Load reads (all but
// .github/hooks/*.json, see [IsHooksDirFile]), for a watcher.
func Files(folder, home, userDir string) []string {
	files := []string{
		filepath.Join(folder, ".claude", "settings.json"), filepath.Join(folder, ".claude", "settings.local.json"),
		filepath.Join(folder, ".codex", "hooks.json"), filepath.Join(folder, ".codex", "config.toml"),
		filepath.Join(folder, ".loom", "hooks.json"),
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".claude", "settings.json"), filepath.Join(home, ".codex", "hooks.json"),
			filepath.Join(home, ".codex", "config.toml"))
	}
	if userDir != "" {
		files = append(files, filepath.Join(userDir, "hooks.json"))
	}
	return files
}

// IsHooksDirFile reports whether path is a .github/hooks/*.json of folder.
func IsHooksDirFile(folder, path string) bool {
	return filepath.Dir(path) == filepath.Join(folder, ".github", "hooks") && strings.HasSuffix(path, ".json")
}

type loader struct {
	hooks    []*Hook
	problems []agentfiles.Problem
}

func (l *loader) problem(path string, line int, format string, args ...any) {
	l.problems = append(l.problems, agentfiles.Problem{Path: path, Line: line, Reason: fmt.Sprintf(format, args...)})
}

// read returns the file's bytes; nil when it does not exist (no problem)
// or cannot be read (a problem).
func (l *loader) read(path string) []byte {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		l.problem(path, 0, "unreadable: %v", err)
		return nil
	}
	if !st.Mode().IsRegular() {
		l.problem(path, 0, "not a regular file")
		return nil
	}
	if st.Size() > maxHooksFile {
		l.problem(path, 0, "%d bytes, over the %d-byte limit for a hooks file", st.Size(), maxHooksFile)
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		l.problem(path, 0, "unreadable: %v", err)
		return nil
	}
	return data
}

// jsonFile reads a JSON file whose top-level "hooks" object maps events
// to hook lists (every format but Codex's TOML).
func (l *loader) jsonFile(path, folder string, f Format, scope string) {
	data := l.read(path)
	if data == nil {
		return
	}
	events, err := hooksObject(data)
	if err != nil {
		l.problem(path, lineOf(data, offsetOf(err)), "not valid JSON: %v", err)
		return
	}
	for _, ev := range events {
		l.event(path, folder, f, scope, data, ev)
	}
}

// rawEvent is one event key of a hooks object with its entries and their
// offsets in the file.
type rawEvent struct {
	name    string
	offset  int64
	entries []rawEntry
	// notArray: the event's value is not a list.
	notArray bool
}

type rawEntry struct {
	offset int64
	raw    json.RawMessage
}

// offsetError carries the offset of a syntax or type error.
type offsetError struct {
	off int64
	err error
}

func (e *offsetError) Error() string { return e.err.Error() }

func offsetOf(err error) int64 {
	var se *json.SyntaxError
	var oe *offsetError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se.Offset
	case errors.As(err, &oe):
		return oe.off
	case errors.As(err, &te):
		return te.Offset
	}
	return 0
}

// hooksObject walks data's top-level object to its "hooks" member and
// returns each event's entries with their offsets.
func hooksObject(data []byte) ([]rawEvent, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var events []rawEvent
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return nil, err
		}
		if key != "hooks" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		if err := expectDelim(dec, '{'); err != nil {
			return nil, err
		}
		for dec.More() {
			off := dec.InputOffset()
			name, err := stringToken(dec)
			if err != nil {
				return nil, err
			}
			ev := rawEvent{name: name, offset: off + leadingSpace(data[off:])}
			var raw json.RawMessage
			start := dec.InputOffset()
			start += colonSpace(data[start:])
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			entries, ok := arrayEntries(raw, start)
			ev.entries, ev.notArray = entries, !ok
			events = append(events, ev)
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, err
		}
	}
	return events, nil
}

// arrayEntries splits a JSON array into its elements with their offsets
// (base is the array's offset in the file); ok is false when raw is not
// an array.
func arrayEntries(raw json.RawMessage, base int64) ([]rawEntry, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if expectDelim(dec, '[') != nil {
		return nil, false
	}
	var out []rawEntry
	for dec.More() {
		off := dec.InputOffset()
		var e json.RawMessage
		if dec.Decode(&e) != nil {
			return out, true
		}
		out = append(out, rawEntry{offset: base + off + leadingSpace(raw[off:]), raw: e})
	}
	return out, true
}

// leadingSpace counts the separators before the next value.
func leadingSpace(b []byte) int64 {
	n := int64(0)
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' {
			break
		}
		n++
	}
	return n
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return &offsetError{off: dec.InputOffset(), err: fmt.Errorf("expected %q, found %v", string(d), tok)}
	}
	return nil
}

func stringToken(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", &offsetError{off: dec.InputOffset(), err: fmt.Errorf("expected a key, found %v", tok)}
	}
	return s, nil
}

// lineOf is the 1-based line of offset in data.
func lineOf(data []byte, offset int64) int {
	if offset <= 0 {
		return 1
	}
	offset = min(offset, int64(len(data)))
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// eventNames maps each format's event names onto loom's events. An event
// of the format that loom does not fire maps to "".
var eventNames = map[Format]map[string]Event{
	FormatClaude: {
		"PreToolUse": PreToolUse, "PostToolUse": PostToolUse, "UserPromptSubmit": UserPromptSubmit, "Stop": Stop,
		"SessionStart": SessionStart, "PreCompact": PreCompact, "Notification": Notification,
	},
	FormatCopilot: {
		"preToolUse": PreToolUse, "postToolUse": PostToolUse, "userPromptSubmitted": UserPromptSubmit, "agentStop": Stop,
		"sessionStart": SessionStart,
	},
}

func init() {
	// Codex's, VS Code's and loom's own names are Claude Code's.
	eventNames[FormatCodex] = eventNames[FormatClaude]
	eventNames[FormatVSCode] = eventNames[FormatClaude]
	eventNames[FormatLoom] = eventNames[FormatClaude]
}

// event reads one event's entries.
func (l *loader) event(path, folder string, f Format, scope string, data []byte, ev rawEvent) {
	line := lineOf(data, ev.offset)
	if f == FormatVSCode && ev.name != "" && ev.name[0] >= 'a' && ev.name[0] <= 'z' {
		f = FormatCopilot // the Copilot CLI's camelCase events, flat entries
	}
	event, known := eventNames[f][ev.name]
	if !known {
		l.problem(path, line, "hook event %q is not one loom fires (it fires %s); its hooks are ignored", ev.name, eventList(f))
		return
	}
	if ev.notArray {
		l.problem(path, line, "hooks of %s must be a list", ev.name)
		return
	}
	for _, e := range ev.entries {
		eline := lineOf(data, e.offset)
		var group struct {
			Matcher *string           `json:"matcher"`
			Hooks   []json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(e.raw, &group); err != nil {
			l.problem(path, eline, "a %s entry is not an object: %v", ev.name, err)
			continue
		}
		if group.Hooks == nil {
			// A hook itself (VS Code's and Copilot's flat lists).
			l.handler(path, folder, f, scope, event, "", eline, e.raw)
			continue
		}
		matcher := ""
		if group.Matcher != nil {
			matcher = *group.Matcher
		}
		hooks := memberEntries(e.raw, "hooks")
		for i, h := range group.Hooks {
			hl := eline
			if i < len(hooks) {
				hl = lineOf(data, e.offset+hooks[i].offset)
			}
			l.handler(path, folder, f, scope, event, matcher, hl, h)
		}
	}
}

// memberEntries returns the elements of the array member key of the
// object obj, with offsets relative to obj.
func memberEntries(obj json.RawMessage, key string) []rawEntry {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if expectDelim(dec, '{') != nil {
		return nil
	}
	for dec.More() {
		k, err := stringToken(dec)
		if err != nil {
			return nil
		}
		start := dec.InputOffset()
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return nil
		}
		if k == key {
			start += colonSpace(obj[start:])
			entries, _ := arrayEntries(raw, start)
			return entries
		}
	}
	return nil
}

// colonSpace counts the ':' and blanks before a member's value.
func colonSpace(b []byte) int64 {
	n := int64(0)
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ':' {
			break
		}
		n++
	}
	return n
}

func eventList(f Format) string {
	var names []string
	for n, ev := range eventNames[f] {
		if ev != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// handlerJSON is a hook handler in any of the JSON formats.
type handlerJSON struct {
	Type       string            `json:"type"`
	Command    string            `json:"command"`
	Bash       string            `json:"bash"`  // Copilot CLI
	Linux      string            `json:"linux"` // VS Code's per-OS override
	Timeout    *float64          `json:"timeout"`
	TimeoutSec *float64          `json:"timeoutSec"`
	Cwd        string            `json:"cwd"`
	Env        map[string]string `json:"env"`
	Disabled   bool              `json:"disabled"`
}

func (l *loader) handler(path, folder string, f Format, scope string, ev Event, matcher string, line int, raw json.RawMessage) {
	var h handlerJSON
	if err := json.Unmarshal(raw, &h); err != nil {
		l.problem(path, line, "a %s hook is not valid: %v", ev, err)
		return
	}
	timeout := h.Timeout
	if h.TimeoutSec != nil {
		timeout = h.TimeoutSec
	}
	cmd := h.Command
	if h.Linux != "" {
		cmd = h.Linux
	}
	if h.Bash != "" {
		cmd = h.Bash
	}
	l.add(path, folder, f, scope, ev, matcher, line, handlerSpec{typ: h.Type, command: cmd, timeout: timeout, cwd: h.Cwd, env: h.Env, disabled: h.Disabled})
}

type handlerSpec struct {
	typ, command string
	timeout      *float64
	cwd          string
	env          map[string]string
	disabled     bool
}

func (l *loader) add(path, folder string, f Format, scope string, ev Event, matcher string, line int, s handlerSpec) {
	switch {
	case s.disabled:
		l.problem(path, line, "a %s hook is disabled; not run", ev)
		return
	case s.typ != "" && s.typ != "command":
		l.problem(path, line, "a %s hook of type %q is not run by loom (only type \"command\" is)", ev, s.typ)
		return
	case strings.TrimSpace(s.command) == "":
		l.problem(path, line, "a %s hook has no command", ev)
		return
	}
	h := &Hook{Event: ev, Matcher: matcher, Command: s.command, Source: path, Line: line, Format: f, Scope: scope, Env: s.env, Dir: folder}
	h.Timeout = DefaultTimeout
	if f == FormatCopilot || f == FormatVSCode {
		h.Timeout = DefaultCopilotTimeout
	}
	if s.timeout != nil {
		if *s.timeout <= 0 {
			l.problem(path, line, "a %s hook's timeout must be positive seconds; %v given", ev, *s.timeout)
			return
		}
		h.Timeout = min(time.Duration(*s.timeout*float64(time.Second)), MaxTimeout)
	}
	if s.cwd != "" {
		dir := s.cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(folder, dir)
		}
		h.Dir = filepath.Clean(dir)
	}
	if err := h.compileMatcher(); err != nil {
		l.problem(path, line, "%s", err)
		return
	}
	l.hooks = append(l.hooks, h)
}

// codexTOML reads the [hooks] table of a Codex config.toml: the same
// nesting as hooks.json ([[hooks.PreToolUse]] matcher groups with their
// [[hooks.PreToolUse.hooks]] handlers).
func (l *loader) codexTOML(path, folder, scope string) {
	data := l.read(path)
	if data == nil {
		return
	}
	var doc struct {
		Hooks map[string]toml.Primitive `toml:"hooks"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		line := 0
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line = pe.Position.Line
		}
		l.problem(path, line, "not valid TOML: %v", err)
		return
	}
	names := make([]string, 0, len(doc.Hooks))
	for n := range doc.Hooks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "state" {
			continue
		}
		line := tomlLine(data, "hooks."+name)
		ev, known := eventNames[FormatCodex][name]
		if !known {
			l.problem(path, line, "hook event %q is not one loom fires (it fires %s); its hooks are ignored", name, eventList(FormatCodex))
			continue
		}
		var groups []struct {
			Matcher string `toml:"matcher"`
			Hooks   []struct {
				Type    string   `toml:"type"`
				Command string   `toml:"command"`
				Timeout *float64 `toml:"timeout"`
			} `toml:"hooks"`
		}
		if err := md.PrimitiveDecode(doc.Hooks[name], &groups); err != nil {
			l.problem(path, line, "hooks.%s: %v", name, err)
			continue
		}
		for _, g := range groups {
			for _, h := range g.Hooks {
				l.add(path, folder, FormatCodex, scope, ev, g.Matcher, line, handlerSpec{typ: h.Type, command: h.Command, timeout: h.Timeout})
			}
		}
	}
}

// tomlLine is the line of the first table header naming key.
func tomlLine(data []byte, key string) int {
	for i, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") && strings.Contains(t, key) {
			return i + 1
		}
	}
	return 0
}
