package llm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// Script is a [Provider] that replays a scripted model: a list of steps,
// each answering one request (or several, with Repeat). It is safe for
// concurrent use; two sessions sharing a script consume its steps in the
// order their requests arrive.
type Script struct {
	name  string
	steps []Step
	mu    sync.Mutex
	used  []int // used[i] counts the requests step i answered
}

// Step is one scripted model response.
type Step struct {
	// Name labels the step in error messages; default "step N" (1-based).
	Name string `toml:"name"`
	// Match selects the requests this step answers.
	Match Match `toml:"match"`
	// Repeat lets the step answer any number of requests; otherwise it
	// answers one.
	Repeat bool `toml:"repeat"`
	// Delay is waited before the first event.
	Delay time.Duration `toml:"delay"`
	// Pace is waited between two events.
	Pace time.Duration `toml:"pace"`
	// Text is streamed first, one LlmTextDelta per element.
	Text []string `toml:"text"`
	// Reasoning is streamed first, as LlmReasoningDelta chunks.
	Reasoning []string `toml:"reasoning"`
	// ToolCalls are streamed after the text.
	ToolCalls []ScriptToolCall `toml:"tool_call"`
	// Usage is reported in LlmCompleted.
	Usage ScriptUsage `toml:"usage"`
	// FinishReason defaults to "tool_calls" when there are tool calls,
	// "stop" otherwise.
	FinishReason string `toml:"finish_reason"`
	// Error, when set, ends the response with an LlmError instead of an
	// LlmCompleted, after the text and tool calls (a mid-stream error).
	Error *ScriptError `toml:"error"`
}

// Match is a condition on a request; all its non-empty fields must hold.
// The zero Match matches every request. "Contains" means substring.
type Match struct {
	// LastUserContains: the last user message contains this text.
	LastUserContains string `toml:"last_user_contains"`
	// LastToolResultContains: the last tool result contains this text.
	LastToolResultContains string `toml:"last_tool_result_contains"`
	// LastMessageContains: the last message, whatever its role, contains
	// this text.
	LastMessageContains string `toml:"last_message_contains"`
	// LastRole: the last message has this role ("user", "tool", …).
	LastRole string `toml:"last_role"`
	// HasTool: the request offers a tool of this name.
	HasTool string `toml:"has_tool"`
}

// ScriptToolCall is one scripted tool call.
type ScriptToolCall struct {
	// ID defaults to "call_<step>_<n>".
	ID string `toml:"id"`
	// Name is the tool's name.
	Name string `toml:"name"`
	// Arguments is the JSON arguments text, passed through as-is.
	Arguments string `toml:"arguments"`
	// Split streams Arguments as this many deltas (default 1).
	Split int `toml:"split"`
	// Chunks, instead of Arguments and Split, gives the deltas verbatim.
	Chunks []string `toml:"chunks"`
}

// ScriptUsage is the token usage reported by a step. Total defaults to
// Prompt + Completion.
type ScriptUsage struct {
	Prompt     int64 `toml:"prompt"`
	Completion int64 `toml:"completion"`
	Total      int64 `toml:"total"`
	// Cached and Reasoning, when set, are reported as cached prompt
	// tokens and reasoning tokens.
	Cached    *int64 `toml:"cached"`
	Reasoning *int64 `toml:"reasoning"`
}

// ScriptError is a scripted model error.
type ScriptError struct {
	// Status is the HTTP status; it sets Kind and Retryable the way the
	// OpenAI provider classifies it, unless they are given.
	Status int `toml:"status"`
	// Kind overrides the kind derived from Status.
	Kind fsm.ErrorKind `toml:"kind"`
	// Retryable overrides the retryability derived from Status.
	Retryable *bool `toml:"retryable"`
	// RetryAfter is the server's minimum delay.
	RetryAfter time.Duration `toml:"retry_after"`
	// Message is the error text.
	Message string `toml:"message"`
}

// scriptFile is the TOML document.
type scriptFile struct {
	Name  string `toml:"name"`
	Steps []Step `toml:"step"`
}

// NewScript returns a script playing steps, checking them first. name
// appears in error messages.
func NewScript(name string, steps ...Step) (*Script, error) {
	if name == "" {
		name = "script"
	}
	s := &Script{name: name, steps: steps, used: make([]int, len(steps))}
	for i := range s.steps {
		st := &s.steps[i]
		if st.Name == "" {
			st.Name = fmt.Sprintf("step %d", i+1)
		}
		if err := st.check(); err != nil {
			return nil, fmt.Errorf("script %q: %s: %w", name, st.Name, err)
		}
	}
	return s, nil
}

// ParseScript reads a script in TOML; this is how the offline demo loads
// an embedded script. The format:
//
//	name = "demo"                  # optional, shown in errors
//
//	[[step]]                       # steps are tried in file order
//	name = "look first"            # optional
//	match.last_user_contains = "what is in go.mod"
//	pace = "20ms"                  # optional, between events (delay: before)
//	reasoning = ["The user wants go.mod."]  # optional, streamed first
//	text = ["Let me ", "look."]    # one text delta each
//	usage = { prompt = 50, completion = 12 }  # also cached, reasoning
//	[[step.tool_call]]
//	id = "call_1"                  # optional
//	name = "read_file"
//	arguments = '{"path":"go.mod"}'
//	split = 3                      # or chunks = ['{"pa', 'th":"go.mod"}']
//
//	[[step]]
//	match.last_tool_result_contains = "module "
//	text = ["It declares a module."]
//
//	[[step]]
//	error = { status = 429, retry_after = "2s", message = "slow down" }
//
// A request is answered by the first step, in file order, whose match
// holds and which has not answered a request yet (repeat = true lifts
// that limit). Match keys: last_user_contains, last_tool_result_contains,
// last_message_contains, last_role, has_tool. An error table ends the
// response after any text and tool calls; kind and retryable default from
// status. Unknown keys are rejected.
func ParseScript(data []byte) (*Script, error) {
	return parseScript("script", data)
}

// LoadScript reads a TOML script file (see [ParseScript]). The script is
// named after the file unless it names itself.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	return parseScript(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), data)
}

// LoadScriptFS reads a TOML script from fsys, e.g. an embed.FS.
func LoadScriptFS(fsys fs.FS, path string) (*Script, error) {
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	return parseScript(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), data)
}

func parseScript(name string, data []byte) (*Script, error) {
	var f scriptFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, fmt.Errorf("script %q: %w", name, err)
	}
	if keys := md.Undecoded(); len(keys) > 0 {
		ks := make([]string, len(keys))
		for i, k := range keys {
			ks[i] = k.String()
		}
		sort.Strings(ks)
		return nil, fmt.Errorf("script %q: unknown keys: %s", name, strings.Join(ks, ", "))
	}
	if f.Name != "" {
		name = f.Name
	}
	if len(f.Steps) == 0 {
		return nil, fmt.Errorf("script %q: no [[step]]", name)
	}
	return NewScript(name, f.Steps...)
}

// Name returns the script's name.
func (s *Script) Name() string { return s.name }

// Unplayed returns the names of the steps that answered no request, so a
// test can check that a whole session was replayed.
func (s *Script) Unplayed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i, n := range s.used {
		if n == 0 {
			out = append(out, s.steps[i].Name)
		}
	}
	return out
}

// check validates a step.
func (st *Step) check() error {
	if st.Delay < 0 || st.Pace < 0 {
		return errors.New("negative delay or pace")
	}
	for i, c := range st.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool call %d has no name", i+1)
		}
		if c.Split < 0 {
			return fmt.Errorf("tool call %d: negative split", i+1)
		}
		if len(c.Chunks) > 0 && c.Arguments != "" {
			return fmt.Errorf("tool call %d: give arguments or chunks, not both", i+1)
		}
	}
	if e := st.Error; e != nil {
		if e.Status == 0 && e.Kind == "" {
			return errors.New("error needs a status or a kind")
		}
		if e.RetryAfter < 0 {
			return errors.New("negative retry_after")
		}
	}
	switch st.Match.LastRole {
	case "", string(fsm.RoleSystem), string(fsm.RoleUser), string(fsm.RoleAssistant), string(fsm.RoleTool):
	default:
		return fmt.Errorf("match.last_role %q is not a role", st.Match.LastRole)
	}
	return nil
}

// matches reports whether m holds for req: each condition it sets.
func (m *Match) matches(req *Request) bool {
	return lastOfRoleContains(req.Messages, fsm.RoleUser, m.LastUserContains) &&
		lastOfRoleContains(req.Messages, fsm.RoleTool, m.LastToolResultContains) &&
		lastMessageIs(req.Messages, m.LastMessageContains, m.LastRole) &&
		(m.HasTool == "" || slices.ContainsFunc(req.Tools, func(t ToolSchema) bool { return t.Name == m.HasTool }))
}

// lastOfRoleContains reports whether want is "" or the last message of
// role contains it (false when there is none).
func lastOfRoleContains(msgs []fsm.Message, role fsm.Role, want string) bool {
	if want == "" {
		return true
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == role {
			return strings.Contains(msgs[i].Content, want)
		}
	}
	return false
}

// lastMessageIs reports whether the last message contains contains and
// has role; "" asks nothing, and anything asked fails without messages.
func lastMessageIs(msgs []fsm.Message, contains, role string) bool {
	if contains == "" && role == "" {
		return true
	}
	if len(msgs) == 0 {
		return false
	}
	last := msgs[len(msgs)-1]
	return strings.Contains(last.Content, contains) && (role == "" || string(last.Role) == role)
}
