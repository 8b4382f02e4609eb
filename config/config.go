// Package config loads and merges loom.toml.
//
// Sources apply in precedence order, each one overriding only the keys it
// sets: [Default], the user file (~/.config/loom/loom.toml, or --config),
// the workspace file (<folder>/.loom.toml, or <folder>/loom.toml when that is
// absent), then JSON overrides from the editor (LSP initializationOptions,
// then workspace/didChangeConfiguration). See [Load].
//
// Every problem is an [*Error] naming its source, and its line for a TOML
// file: unknown keys and values of the wrong type are errors, never ignored.
//
// A Config never holds an API key, only the name of the environment variable
// that holds it ([Model.APIKeyEnv]).
package config

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is the merged configuration of one workspace folder.
type Config struct {
	// Model is [model]: the model and the server it is asked on.
	Model Model `toml:"model"`
	// Agent is [agent]: the bounds of one user turn.
	Agent Agent `toml:"agent"`
	// Tools is [tools]: approvals, the sandbox, edits, diagnostics.
	Tools Tools `toml:"tools"`
	// Hooks is [hooks]: the git auto-commit (not the agent hooks).
	Hooks Hooks `toml:"hooks"`
	// MCP is [mcp]: the MCP servers whose tools the agent may call.
	MCP MCP `toml:"mcp"`
	// Journal is the retention of old conversation journals.
	Journal Journal `toml:"journal"`
	// Trust is [trust]: the folders the user trusts.
	Trust Trust `toml:"trust"`
	// Search is the web search service the web_search tool queries;
	// off unless the user configures one (config/fetch.go).
	Search Search `toml:"search"`
	// Completion is [completion]: inline completion's own model
	// (config/completion.go).
	Completion Completion `toml:"completion"`
	// Subagents is [subagents]: the caps on the subagents a conversation
	// starts (config/subagents.go).
	Subagents Subagents `toml:"subagents"`
	// Worktrees is [worktrees]: the worktrees conversations work in
	// (config/worktrees.go).
	Worktrees Worktrees `toml:"worktrees"`

	// origins maps a dotted key path ("tools.bash") to where it was last
	// set, so that Validate can name the source. Nil for a hand-built Config.
	origins map[string]origin
	// trust is what Load decided about the workspace folder's trust.
	trust trustState
	// mcpNotes are the notes on the peers' MCP files (MCPNotes).
	mcpNotes []string
}

// origin is where one key got its value.
type origin struct {
	src  string // file path or override name
	line int    // 1-based, 0 when unknown
}

// Providers known to [Model.Provider].
const (
	// ProviderOpenAI is any OpenAI-compatible chat-completions server:
	// OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter.
	ProviderOpenAI = "openai"
	// ProviderAnthropic is Anthropic's Messages API (api.anthropic.com, or
	// a server that serves /v1/messages: Ollama, llama.cpp, LM Studio).
	ProviderAnthropic = "anthropic"
	// ProviderScript replays a scripted-model file ([Model.Script]); used by
	// tests and `loom-lsp demo`.
	ProviderScript = "script"
)

// DefaultBaseURL is OpenAI's API, the default [Model.BaseURL].
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultAnthropicURL is Anthropic's API, the default [Model.BaseURL] of
// provider "anthropic".
const DefaultAnthropicURL = "https://api.anthropic.com"

// DefaultTrailer is the attribution trailer used when [Hooks.Trailer] is
// empty; {model} is replaced by the model name.
const DefaultTrailer = "Co-authored-by: loom-lsp ({model}) <loom@localhost>"

// Model selects and tunes the language model: which server, which
// model, which wire API, and how it is asked (docs/models.md).
type Model struct {
	// Provider is ProviderOpenAI (any OpenAI-compatible server, and
	// OpenAI's Responses API), ProviderAnthropic (Claude, natively over
	// Anthropic's Messages API; base_url then defaults to
	// https://api.anthropic.com and api_key_env to ANTHROPIC_API_KEY), or
	// ProviderScript (a scripted model, for tests and the demo).
	Provider string `toml:"provider"`
	// BaseURL is the http(s) root of the API, e.g.
	// "http://localhost:11434/v1" for Ollama.
	BaseURL string `toml:"base_url"`
	// Name is the model name sent to the server; "" means not configured.
	Name string `toml:"name"`
	// APIKeyEnv is the NAME of the environment variable holding the API key,
	// never the key itself.
	APIKeyEnv string `toml:"api_key_env"`
	// MaxTokens caps each completion; 0 leaves it to the server (the
	// Messages API requires it: 16384 when unset).
	MaxTokens int `toml:"max_tokens"`
	// MaxTokensField names the request field that carries MaxTokens:
	// MaxTokensFieldAuto (""), "max_tokens" or "max_completion_tokens".
	MaxTokensField string `toml:"max_tokens_field"`
	// ContextWindow is the model's context window in tokens; 0 means
	// asked from the server, else known from the model's name, else
	// 32,768.
	ContextWindow int `toml:"context_window"`
	// Images says whether the model takes pictures in prompts: "auto"
	// (or ""; judged from the model's name), "on" or "off".
	Images string `toml:"images"`
	// Temperature is the sampling temperature; unset leaves it to the
	// server. It is not sent to a reasoning model unless
	// reasoning_effort is "none" (they refuse it).
	Temperature *float64 `toml:"temperature"`
	// Headers are extra HTTP headers sent with every request, e.g.
	// { "X-Title" = "loom" }. A credential header's value (a name with
	// auth, key, token, secret, cookie, …) is masked like the API key.
	Headers map[string]string `toml:"headers"`
	// IdleTimeout aborts a stream that sends nothing for this long, once
	// the server has answered (its response headers arrived).
	IdleTimeout Duration `toml:"idle_timeout"`
	// FirstByteTimeout aborts a request whose server sends no response
	// (not even its headers) for this long: a server that accepted the
	// connection but never answers. Each attempt gets it anew.
	FirstByteTimeout Duration `toml:"first_byte_timeout"`
	// Server names the server's dialect ("ollama", "llamacpp", "vllm",
	// "lmstudio", "deepseek", "gemini", "mistral", "openrouter",
	// "anthropic", "openai"); "" detects it from the base URL, the models
	// list and the response headers.
	Server string `toml:"server"`
	// MaxAnswerBytes caps the text and reasoning of one model response:
	// past it the stream is cut and the turn ends with an error. > 0.
	MaxAnswerBytes int `toml:"max_answer_bytes"`
	// API is the wire API the model is spoken to with: APIChat (Chat
	// Completions), APIResponses (OpenAI's Responses API), APIMessages
	// (Anthropic's Messages API), or "" to choose per model (OpenAI's
	// reasoning and Codex models on api.openai.com use the Responses API,
	// Anthropic's API and provider "anthropic" the Messages API).
	API string `toml:"api"`
	// ReasoningEffort, when set, is sent to the model as each API spells
	// it: "none", "minimal", "low", "medium", "high", "xhigh" or "max"
	// (as OpenAI spells them); "" is the
	// model's default. A conversation may
	// choose its own (loom.setEffort).
	ReasoningEffort string `toml:"reasoning_effort"`
	// Script is the scripted-model file for ProviderScript (a TOML
	// script, see llm/testdata/README.md), made absolute relative to the
	// file that set it.
	Script string `toml:"script"`
}

// The values of [Model.MaxTokensField].
const (
	// MaxTokensFieldAuto sends max_completion_tokens to OpenAI's
	// reasoning models (o1, o3, o4-mini, gpt-5…, which refuse max_tokens)
	// and max_tokens to every other model, as local servers expect.
	MaxTokensFieldAuto = "auto"
	// MaxTokensFieldClassic always sends max_tokens.
	MaxTokensFieldClassic = "max_tokens"
	// MaxTokensFieldCompletion always sends max_completion_tokens.
	MaxTokensFieldCompletion = "max_completion_tokens"
)

// The values of [Model.API].
const (
	// APIChat is the Chat Completions API (POST /chat/completions).
	APIChat = "chat"
	// APIResponses is OpenAI's Responses API (POST /responses).
	APIResponses = "responses"
	// APIMessages is Anthropic's Messages API (POST /v1/messages).
	APIMessages = "messages"
)

// ReasoningEfforts are the values of [Model.ReasoningEffort], as OpenAI
// spells them; other APIs get the nearest they know.
var ReasoningEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// Agent bounds one user turn.
type Agent struct {
	// MaxRetries counts retries (not attempts) of a failed model request; >= 0.
	MaxRetries int `toml:"max_retries"`
	// MaxIterations caps model requests per user turn; >= 1.
	MaxIterations int `toml:"max_iterations"`
	// RetryBase is the first retry delay, doubled per retry.
	RetryBase Duration `toml:"retry_base"`
	// RetryMax caps the retry delay; >= RetryBase.
	RetryMax Duration `toml:"retry_max"`
	// SystemPrompt replaces the built-in system prompt when not "" (the
	// AGENTS.md files are added to either).
	SystemPrompt string `toml:"system_prompt"`
	// CompactAt is the fraction of the context window past which the
	// conversation is compacted; in (0, 1], default 0.8.
	CompactAt float64 `toml:"compact_at"`
	// ElideAfterTurns is how many of the last user turns keep their tool
	// results whole in what is sent; older results over 1 KB are elided
	// (the history keeps them). 0 never elides; default 3.
	ElideAfterTurns int `toml:"elide_after_turns"`
}

// Tools configures the agent's tools.
type Tools struct {
	// Bash is the approval policy of the agent's commands (the bash
	// tool): PolicyAllow runs them unasked, PolicyAsk asks each time
	// (unless an approval rule of the folder allows it), PolicyDeny never
	// runs them.
	Bash Policy `toml:"bash"`
	// BashTimeout is the default timeout of one bash command.
	BashTimeout Duration `toml:"bash_timeout"`
	// BashMaxTimeout is the largest timeout the model may ask for;
	// >= BashTimeout.
	BashMaxTimeout Duration `toml:"bash_max_timeout"`
	// MaxOutputBytes caps a tool result (head and tail are kept); > 0.
	MaxOutputBytes int `toml:"max_output_bytes"`
	// ApprovalTimeout is how long an approval waits for the user's
	// answer before the call is denied; > 0.
	ApprovalTimeout Duration `toml:"approval_timeout"`
	// Sandbox is SandboxWorkspace (commands and stdio MCP servers run
	// under Landlock, writes confined to the folder, the temp directory
	// and the tools' caches) or SandboxOff (your full permissions).
	Sandbox string `toml:"sandbox"`
	// SandboxWrite adds writable directories to the sandbox's (absolute,
	// or starting with ~/), e.g. ["~/scratch"].
	SandboxWrite []string `toml:"sandbox_write"`
	// SandboxHide adds unreadable directories to the sandbox's (absolute,
	// or starting with ~/), e.g. ["~/.kube/prod"].
	SandboxHide []string `toml:"sandbox_hide"`
	// SandboxUnhide takes paths out of the hidden ones (a credential
	// file a command needs, e.g. ~/.npmrc for a private registry).
	SandboxUnhide []string `toml:"sandbox_unhide"`
	// SandboxSockets lists the unix sockets commands may reach (all
	// others outside the workspace are hidden): absolute, ~/…,
	// $XDG_RUNTIME_DIR/… or $SSH_AUTH_SOCK, e.g. ["$SSH_AUTH_SOCK",
	// "/run/docker.sock"].
	SandboxSockets []string `toml:"sandbox_sockets"`
	// Network is what network commands reach: "on" (anything), "off"
	// (nothing: a network namespace of their own), or a list of
	// "host:port" (TCP connections to those ports only).
	Network Network `toml:"network"`
	// Edits says whether the agent's file changes land at once
	// (EditsAuto) or wait for the user's review (EditsReview).
	Edits EditMode `toml:"edits"`
	// PlanCommands says whether commands run in the read-only modes
	// (plan, ask): PlanCommandsOff refuses them, PlanCommandsReadOnly
	// runs them in the sandbox with the workspace read-only (still
	// under tools.bash's approvals).
	PlanCommands string `toml:"plan_commands"`
	// Diagnostics is DiagnosticsAuto (after a batch of edits the model
	// reads the problems they introduced, from the editor's language
	// servers or one loom starts in the sandbox) or DiagnosticsOff.
	Diagnostics string `toml:"diagnostics"`
	// DiagnosticsWait is the longest wait for a language server after
	// an edit.
	DiagnosticsWait Duration `toml:"diagnostics_wait"`
	// DiagnosticsSeverity is the least severe problem reported: "error",
	// "warning", "info" or "hint".
	DiagnosticsSeverity string `toml:"diagnostics_severity"`
	// LanguageServers are language servers loom may start, by name,
	// tried before the built-in ones (config/diagnostics.go).
	LanguageServers map[string]LanguageServer `toml:"language_servers"`
	// Fetch is the approval policy of the fetch tool (web pages): under
	// "ask" each host is asked for, unless an approval rule allows it.
	// It reaches what tools.network lets commands reach.
	Fetch Policy `toml:"fetch"`
	// FetchTimeout bounds one fetch, redirects included; > 0.
	FetchTimeout Duration `toml:"fetch_timeout"`
	// FetchMaxBytes caps the text of one fetched page given to the
	// model; > 0.
	FetchMaxBytes int `toml:"fetch_max_bytes"`
	// FetchPrivate names hosts ("host" or "host:port") fetch may reach
	// although they resolve to a loopback, private or link-local address
	// (a docs server on this machine, an intranet wiki); others such are
	// refused.
	FetchPrivate []string `toml:"fetch_private"`
	// FetchDeny lists hosts fetch never reaches, subdomains included.
	FetchDeny []string `toml:"fetch_deny"`
}

// The values of [Tools.PlanCommands].
const (
	// PlanCommandsOff refuses commands in plan and ask modes.
	PlanCommandsOff = "off"
	// PlanCommandsReadOnly runs them in the sandbox with the workspace
	// read-only.
	PlanCommandsReadOnly = "read-only"
)

// EditMode says when the agent's file changes land.
type EditMode string

// The edit modes.
const (
	// EditsAuto applies each change as the tool makes it.
	EditsAuto EditMode = "auto"
	// EditsReview proposes each change; only the hunks the user accepts
	// are applied.
	EditsReview EditMode = "review"
)

// Journal configures how long the journals of past conversations (set
// aside by a reset or a new exec) are kept in the state directory.
type Journal struct {
	// Keep is how many past conversations of a folder are kept, the most
	// recent ones; 0 keeps none.
	Keep int `toml:"keep"`
	// MaxAge deletes past conversations not written to for this long.
	MaxAge Duration `toml:"max_age"`
}

// Hooks configures the post-tool hook: the git auto-commit of the
// agent's edits. (Agent hooks, such as Claude Code's, are read from their
// own files: docs/hooks.md.)
type Hooks struct {
	// AutoCommit commits the files the tools changed after each batch.
	AutoCommit bool `toml:"auto_commit"`
	// Attribution adds a trailer naming the model to each auto-commit.
	Attribution bool `toml:"attribution"`
	// Trailer is the attribution template; {model} is the model name.
	// "" means DefaultTrailer.
	Trailer string `toml:"trailer"`
	// MaxFileBytes is the largest file the auto-commit takes; a bigger
	// one is only reported (commit it with git). 0 means the default,
	// [DefaultMaxFileBytes] (10 MiB).
	MaxFileBytes int `toml:"max_file_bytes"`
}

// DefaultMaxFileBytes is [Hooks.MaxFileBytes]' default: 10 MiB.
const DefaultMaxFileBytes = 10 << 20

// FileLimit returns the largest file size the auto-commit takes.
func (h Hooks) FileLimit() int64 {
	if h.MaxFileBytes <= 0 {
		return DefaultMaxFileBytes
	}
	return int64(h.MaxFileBytes)
}

// TrailerFor returns the attribution trailer for a commit made with model,
// or "" when attribution is off.
func (h Hooks) TrailerFor(model string) string {
	if !h.Attribution {
		return ""
	}
	t := h.Trailer
	if t == "" {
		t = DefaultTrailer
	}
	if model == "" {
		// No model name: leave out the "({model})" part rather than print "()".
		t = strings.ReplaceAll(t, " ({model})", "")
	}
	return strings.ReplaceAll(t, "{model}", model)
}

// Policy is an approval policy: PolicyAllow, PolicyAsk or PolicyDeny.
type Policy string

// Approval policies.
const (
	PolicyAllow Policy = "allow" // run without asking
	PolicyAsk   Policy = "ask"   // ask the editor each time
	PolicyDeny  Policy = "deny"  // never run
)

// Duration is a time.Duration written in TOML and JSON as a string such as
// "30s" or "2m".
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string ("90s", "1m30s").
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q: want a string like \"30s\" or \"2m\"", b)
	}
	d.Duration = v
	return nil
}

// MarshalText formats the duration as UnmarshalText accepts it.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// String is time.Duration's String without trailing zero units: "2m",
// not "2m0s".
func (d Duration) String() string {
	s := d.Duration.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Default returns the built-in configuration. It has no model name, so
// [Config.ModelReady] reports how to configure one.
func Default() Config {
	return Config{
		Subagents: DefaultSubagents(),
		Worktrees: DefaultWorktrees(),
		Model: Model{
			Provider:         ProviderOpenAI,
			BaseURL:          DefaultBaseURL,
			APIKeyEnv:        "OPENAI_API_KEY",
			MaxTokensField:   MaxTokensFieldAuto,
			IdleTimeout:      Duration{60 * time.Second},
			FirstByteTimeout: Duration{20 * time.Second},
			MaxAnswerBytes:   4 << 20,
		},
		Agent: Agent{
			MaxRetries:      3,
			MaxIterations:   25,
			RetryBase:       Duration{time.Second},
			RetryMax:        Duration{30 * time.Second},
			CompactAt:       0.8,
			ElideAfterTurns: 3,
		},
		Tools: Tools{
			Bash:            PolicyAsk,
			BashTimeout:     Duration{2 * time.Minute},
			BashMaxTimeout:  Duration{10 * time.Minute},
			MaxOutputBytes:  64 << 10,
			ApprovalTimeout: Duration{10 * time.Minute},
			Sandbox:         SandboxWorkspace,
			Network:         Network{Mode: NetworkOn},
			Edits:           EditsAuto,
			PlanCommands:    PlanCommandsOff,
			Fetch:           PolicyAsk,
			FetchTimeout:    Duration{30 * time.Second},
			FetchMaxBytes:   100_000,

			Diagnostics:         DiagnosticsAuto,
			DiagnosticsWait:     Duration{DefaultDiagnosticsWait},
			DiagnosticsSeverity: "warning",
		},
		Hooks: Hooks{
			AutoCommit:   true,
			Attribution:  true,
			Trailer:      DefaultTrailer,
			MaxFileBytes: DefaultMaxFileBytes,
		},
		Journal:    Journal{Keep: 20, MaxAge: Duration{30 * 24 * time.Hour}},
		Completion: defaultCompletion(),
	}
}

// String renders c as TOML, with header values redacted.
func (c Config) String() string {
	if len(c.Model.Headers) > 0 {
		h := make(map[string]string, len(c.Model.Headers))
		for k := range c.Model.Headers {
			h[k] = "<redacted>"
		}
		c.Model.Headers = h
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return "config: " + err.Error()
	}
	return b.String()
}

// GoString is String, so that %#v redacts too.
func (c Config) GoString() string { return c.String() }

// Error is one problem with one source of configuration. Load and Validate
// return *Error values, joined with errors.Join when there are several.
type Error struct {
	// Source is the file path, or an override name such as
	// "initializationOptions"; "" when unknown.
	Source string
	// Line is 1-based within Source; 0 when unknown or not a file.
	Line int
	// Key is the dotted key path ("model.name"); "" when not about one key.
	Key string
	// Msg describes the problem, naming the key when there is one.
	Msg string
}

// Error formats e as "source:line: msg".
func (e *Error) Error() string {
	loc := e.Source
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if loc == "" {
		return e.Msg
	}
	return loc + ": " + e.Msg
}

// keyErr is an error about key, located where key was last set.
func (c Config) keyErr(key, format string, args ...any) *Error {
	o := c.origins[key]
	return &Error{Source: o.src, Line: o.line, Key: key, Msg: key + ": " + fmt.Sprintf(format, args...)}
}

// setBy reports whether key was set by a source other than the defaults.
func (c Config) setBy(key string) bool {
	_, ok := c.origins[key]
	return ok
}

// blame picks which of two related keys an error about both is reported
// at: the one a source set (rather than a default), preferring the first.
func (c Config) blame(first, second string) string {
	if !c.setBy(first) && c.setBy(second) {
		return second
	}
	return first
}

// checkURL accepts an absolute http or https URL with a host.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf(`invalid URL %q: want an http(s) URL such as "http://localhost:11434/v1"`, s)
	}
	return nil
}

// credentialHeaderWords are the words of a header name that mark its
// value as a credential (Authorization, Azure's api-key, x-api-key, a
// gateway's token, cookies).
var credentialHeaderWords = []string{"auth", "key", "token", "secret", "cookie", "pass", "credential", "signature", "session"}

// SecretHeaderValues returns the values of m's credential headers (see
// credentialHeaderWords), each with the credential an authorization
// scheme ("Bearer x", "Basic x") precedes: a key kept in model.headers is
// masked like the key api_key_env names. Other headers' values (a title,
// a referer) are no secret, and masking them would garble every text
// they occur in.
func (m Model) SecretHeaderValues() []string {
	var out []string
	for name, v := range m.Headers {
		lower := strings.ToLower(name)
		if !slices.ContainsFunc(credentialHeaderWords, func(w string) bool { return strings.Contains(lower, w) }) {
			continue
		}
		out = append(out, v)
		if f := strings.Fields(v); len(f) > 1 {
			out = append(out, f[len(f)-1])
		}
	}
	slices.Sort(out)
	return out
}
