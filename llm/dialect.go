package llm

import (
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// A Dialect is how one family of servers speaks the Chat Completions
// API: what to send it, and how to read its errors. Every difference
// between servers lives in the table below, read by the request builder
// and the error classifier; no other code asks which server it talks to.
//
// The dialect is set with model.server, or detected: from the base URL's
// host (api.deepseek.com…), else from the owned_by of GET /v1/models
// (llama.cpp "llamacpp", vLLM "vllm", Ollama "library", LM Studio
// "organization_owner"), else from the Server response header
// ("llama.cpp"). A server nothing identifies gets the "openai" dialect,
// which understands every dialect's error wordings.
type Dialect struct {
	// Name is the model.server value that selects it.
	Name string
	// About says in a few words which servers it covers.
	About string
	// NoStreamUsage leaves stream_options out of requests: the server
	// refuses it (Mistral answers 422) and reports usage in the last
	// chunk anyway.
	NoStreamUsage bool
	// MaxTokensField is the field that carries model.max_tokens when
	// max_tokens_field is "auto"; "" chooses from the model's name
	// (max_completion_tokens for OpenAI's reasoning models).
	MaxTokensField string
	// EchoReasoning keeps the reasoning of each assistant message and
	// sends it back as its reasoning_content in every later request, the
	// compaction request included; a message with tool calls always
	// carries the field, " " when it had no reasoning (DeepSeek's thinking
	// mode answers 400 "The reasoning_content in the thinking mode must be
	// passed back" otherwise, from the turn after a tool-using turn on).
	EchoReasoning bool
	// EchoSignatures sends each tool call's thought signature back with
	// it, as extra_content.google.thought_signature, within the current
	// turn (Gemini 3 answers 400 "Function call is missing a
	// thought_signature" otherwise).
	EchoSignatures bool
	// EchoDetails keeps the reasoning_details a response streams
	// (OpenRouter's) and sends them back, unchanged, with the assistant
	// message in every later request (Gemini 3 behind OpenRouter refuses
	// a tool loop's next request without them).
	EchoDetails bool
	// ContextWordings are lower-case phrases by which this server says
	// the prompt does not fit the context window, beyond the common ones
	// (contextWordings).
	ContextWordings []string
	// AuthReasons are error reasons (google.rpc.ErrorInfo reason, or the
	// error code) that mean the API key is bad, whatever the status:
	// Gemini answers a bad key with 400 API_KEY_INVALID.
	AuthReasons []string
	// RunningWindow: the server may run the model with a smaller window
	// than the one it was trained with, and tells the running one once
	// the model is loaded (Ollama's GET /api/ps context_length, LM
	// Studio's GET /api/v0/models loaded_context_length).
	RunningWindow bool

	hosts        []string // base URL hosts (or their parent domain)
	ports        []string // default local ports, a weak hint
	owners       []string // owned_by values of GET /v1/models
	serverHeader string   // prefix of the Server response header
}

// dialects is the table, by name. Sources of each entry's facts are the
// fixtures in llmtest/testdata/<name>/, which cite them.
var dialects = map[string]*Dialect{
	"openai": {
		Name:  "openai",
		About: "OpenAI's API, and any server nothing else identifies",
		hosts: []string{"api.openai.com"},
	},
	"ollama": {
		Name:  "ollama",
		About: "Ollama's OpenAI-compatible endpoint (/v1)",
		// Ollama truncates silently instead of answering with an error.
		ContextWordings: []string{"input length exceeds the context length"},
		RunningWindow:   true,
		ports:           []string{"11434"},
		owners:          []string{"library", "ollama"},
	},
	"llamacpp": {
		Name:            "llamacpp",
		About:           "llama.cpp's llama-server",
		ContextWordings: []string{"exceeds the available context size", "exceed_context_size_error", "context shift"},
		owners:          []string{"llamacpp"},
		serverHeader:    "llama.cpp",
	},
	"vllm": {
		Name:            "vllm",
		About:           "vLLM's OpenAI-compatible server",
		ContextWordings: []string{"maximum model length", "max_model_len"},
		owners:          []string{"vllm"},
	},
	"lmstudio": {
		Name:            "lmstudio",
		About:           "LM Studio's local server",
		ContextWordings: []string{"context length of only", "context the overflows", "context overflow"},
		RunningWindow:   true,
		ports:           []string{"1234"},
		owners:          []string{"organization_owner"},
	},
	"deepseek": {
		Name:          "deepseek",
		About:         "DeepSeek's API (thinking mode needs its reasoning echoed in a tool loop)",
		EchoReasoning: true,
		hosts:         []string{"api.deepseek.com"},
		owners:        []string{"deepseek"},
	},
	"gemini": {
		Name:            "gemini",
		About:           "Google Gemini's OpenAI compatibility (thought signatures echoed in a tool loop)",
		EchoSignatures:  true,
		ContextWordings: []string{"input token count", "exceeds the maximum number of tokens"},
		AuthReasons:     []string{"API_KEY_INVALID", "UNAUTHENTICATED", "PERMISSION_DENIED"},
		hosts:           []string{"generativelanguage.googleapis.com"},
		owners:          []string{"google"},
	},
	"mistral": {
		Name:            "mistral",
		About:           "Mistral's API (refuses stream_options)",
		NoStreamUsage:   true,
		ContextWordings: []string{"too large for model with"},
		hosts:           []string{"api.mistral.ai"},
		owners:          []string{"mistralai"},
	},
	"openrouter": {
		Name:        "openrouter",
		About:       "OpenRouter (reasoning_details echoed)",
		EchoDetails: true,
		hosts:       []string{"openrouter.ai"},
	},
	"anthropic": {
		Name:           "anthropic",
		About:          "Anthropic's OpenAI SDK compatibility",
		MaxTokensField: "max_tokens",
		hosts:          []string{"api.anthropic.com"},
	},
}

// DialectNames lists the model.server values, sorted.
func DialectNames() []string {
	names := make([]string, 0, len(dialects))
	for n := range dialects {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DialectByName returns the dialect that model.server names.
func DialectByName(name string) (*Dialect, bool) {
	d, ok := dialects[strings.ToLower(strings.TrimSpace(name))]
	return d, ok
}

// DialectForURL returns the dialect the base URL's host identifies, and
// whether it did: a known API host surely, a default local port weakly
// (sure is false then).
func DialectForURL(baseURL string) (d *Dialect, sure bool) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, false
	}
	host := strings.ToLower(u.Hostname())
	for _, d := range dialects {
		for _, h := range d.hosts {
			if host == h || strings.HasSuffix(host, "."+h) {
				return d, true
			}
		}
	}
	if isLocalHost(host) {
		port := u.Port()
		for _, d := range dialects {
			for _, p := range d.ports {
				if port == p {
					return d, false
				}
			}
		}
	}
	return nil, false
}

// dialectForOwners returns the dialect whose owned_by the models list
// shows, or nil.
func dialectForOwners(owners []string) *Dialect {
	for _, o := range owners {
		o = strings.ToLower(o)
		for _, d := range dialects {
			for _, want := range d.owners {
				if o == want {
					return d
				}
			}
		}
	}
	return nil
}

// dialectForServerHeader returns the dialect the Server response header
// names, or nil.
func dialectForServerHeader(server string) *Dialect {
	if server == "" {
		return nil
	}
	for _, d := range dialects {
		if d.serverHeader != "" && strings.HasPrefix(strings.ToLower(server), d.serverHeader) {
			return d
		}
	}
	return nil
}

func isLocalHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate())
}

// contextWordings are the phrases by which most servers say the prompt
// does not fit (OpenAI, DeepSeek, OpenRouter, vLLM before 0.6,
// Anthropic…).
var contextWordings = []string{
	"context length", "context_length", "maximum context", "context window",
	"context size", "prompt is too long", "too many tokens", "exceeds the context", "input is too long",
	"reduce the length",
}

// saysContextFull reports whether an error's code or message says the
// prompt does not fit, in the common wordings or the dialect's own. The
// generic "openai" dialect (an unidentified server) knows every
// dialect's wordings.
func (d *Dialect) saysContextFull(code, msg string) bool {
	if code == "context_length_exceeded" || code == "string_above_max_length" {
		return true
	}
	m := strings.ToLower(msg + " " + code)
	for _, s := range contextWordings {
		if strings.Contains(m, s) {
			return true
		}
	}
	check := func(dd *Dialect) bool {
		for _, s := range dd.ContextWordings {
			if strings.Contains(m, s) {
				return true
			}
		}
		return false
	}
	if d == nil || d.Name == "openai" {
		for _, dd := range dialects {
			if check(dd) {
				return true
			}
		}
		return false
	}
	return check(d)
}

// saysBadKey reports whether an error's reasons mean a bad API key.
func (d *Dialect) saysBadKey(reasons ...string) bool {
	if d == nil {
		return false
	}
	for _, r := range reasons {
		for _, a := range d.AuthReasons {
			if r != "" && strings.EqualFold(r, a) {
				return true
			}
		}
	}
	return false
}

// dialectState is a provider's dialect, and how it was learned: set by
// model.server or a known host (sure), or guessed and still open to
// detection from the models list and the response headers.
type dialectState struct {
	mu   sync.Mutex
	d    *Dialect
	sure bool
}

func (s *dialectState) set(d *Dialect, sure bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d, s.sure = d, sure
}

func (s *dialectState) copyFrom(o *dialectState) {
	s.d, s.sure = o.d, o.sure
}

// Dialect returns the server's dialect as known now: the generic
// "openai" one until something identifies the server.
func (p *OpenAI) Dialect() *Dialect {
	p.dialect.mu.Lock()
	defer p.dialect.mu.Unlock()
	if p.dialect.d == nil {
		return dialects["openai"]
	}
	return p.dialect.d
}

// noteOwners takes the dialect the owned_by of the models list names
// (read by ContextWindow's probe), unless the dialect is already sure.
func (p *OpenAI) noteOwners(owners []string) {
	d := dialectForOwners(owners)
	if d == nil {
		return
	}
	p.dialect.mu.Lock()
	defer p.dialect.mu.Unlock()
	if !p.dialect.sure {
		p.dialect.d, p.dialect.sure = d, true
	}
}

// noteServerHeader takes the dialect a response's Server header names,
// unless the dialect is already sure.
func (p *OpenAI) noteServerHeader(server string) {
	d := dialectForServerHeader(server)
	if d == nil {
		return
	}
	p.dialect.mu.Lock()
	defer p.dialect.mu.Unlock()
	if !p.dialect.sure {
		p.dialect.d, p.dialect.sure = d, true
	}
}
