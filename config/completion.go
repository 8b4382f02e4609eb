package config

import (
	"slices"
	"time"
)

// Completion configures inline completion (LSP 3.18
// textDocument/inlineCompletion): a fill-in-the-middle model of its own,
// apart from the agent's [Model], off by default. Every key of the
// section is a widening key (see [WideningKey]): a repository's
// .loom.toml can neither turn completion on nor point it elsewhere.
type Completion struct {
	// API is the wire API of the completion server; "" (the default)
	// turns completion off. One of CompletionAPIs.
	API string `toml:"api"`
	// BaseURL is the server's http(s) root: "http://127.0.0.1:8012" for
	// llama.cpp, "http://localhost:11434" for Ollama's native API,
	// "http://localhost:11434/v1" for an OpenAI-style /completions,
	// "https://api.deepseek.com/beta", "https://codestral.mistral.ai".
	BaseURL string `toml:"base_url"`
	// Model is the model name sent to the server (llama.cpp's /infill
	// takes none).
	Model string `toml:"model"`
	// APIKeyEnv is the NAME of the environment variable holding the API
	// key, never the key itself; "" sends no key.
	APIKeyEnv string `toml:"api_key_env"`
	// MaxTokens caps one completion; > 0.
	MaxTokens int `toml:"max_tokens"`
	// Temperature is the sampling temperature; nil leaves it to the
	// server.
	Temperature *float64 `toml:"temperature"`
	// ContextTokens bounds the text around the cursor sent with each
	// request (about four bytes a token): three quarters before the
	// cursor, a quarter after; > 0.
	ContextTokens int `toml:"context_tokens"`
	// Debounce waits this long after a request before asking the model;
	// a newer request for the same document in the meantime replaces it
	// without reaching the server. 0 asks at once (editors debounce
	// themselves).
	Debounce Duration `toml:"debounce"`
	// Timeout bounds one model request; > 0.
	Timeout Duration `toml:"timeout"`
}

// The values of [Completion.API].
const (
	// CompletionInfill is llama.cpp's POST /infill.
	CompletionInfill = "infill"
	// CompletionOpenAI is an OpenAI-style POST /completions with a
	// "suffix" (vLLM, llama.cpp's /v1, DeepSeek's beta FIM, Ollama's /v1).
	CompletionOpenAI = "completions"
	// CompletionOllama is Ollama's native POST /api/generate with a
	// "suffix".
	CompletionOllama = "ollama"
	// CompletionMistral is Mistral's (Codestral's) POST /v1/fim/completions.
	CompletionMistral = "mistral"
	// CompletionChat is a chat model (POST /chat/completions) asked with
	// a fill-in-the-middle prompt, where only chat is served.
	CompletionChat = "chat"
)

// CompletionAPIs are the values of [Completion.API] that turn completion
// on.
var CompletionAPIs = []string{CompletionInfill, CompletionOpenAI, CompletionOllama, CompletionMistral, CompletionChat}

// Enabled reports whether inline completion is configured.
func (c Completion) Enabled() bool { return c.API != "" }

// defaultCompletion is the section's defaults: off.
func defaultCompletion() Completion {
	return Completion{MaxTokens: 128, ContextTokens: 2048, Timeout: Duration{10 * time.Second}}
}

// validateCompletion checks the completion section.
func (c Config) validateCompletion(add func(*Error)) {
	p := c.Completion
	if p.API == "" {
		return
	}
	if !slices.Contains(CompletionAPIs, p.API) {
		add(c.keyErr("completion.api", "unknown API %q: want one of infill, completions, ollama, mistral, chat (or leave it out: off)", p.API))
		return
	}
	if err := checkURL(p.BaseURL); err != nil {
		add(c.keyErr("completion.base_url", "%v", err))
	}
	if p.Model == "" && p.API != CompletionInfill {
		add(c.keyErr("completion.model", "api %q needs the model's name", p.API))
	}
	if p.MaxTokens <= 0 {
		add(c.keyErr("completion.max_tokens", "must be > 0, got %d", p.MaxTokens))
	}
	if p.ContextTokens <= 0 {
		add(c.keyErr("completion.context_tokens", "must be > 0, got %d", p.ContextTokens))
	}
	if p.Temperature != nil && *p.Temperature < 0 {
		add(c.keyErr("completion.temperature", "must be >= 0, got %v", *p.Temperature))
	}
	if p.Debounce.Duration < 0 {
		add(c.keyErr("completion.debounce", "must be >= 0, got %q", p.Debounce.String()))
	}
	if p.Timeout.Duration <= 0 {
		add(c.keyErr("completion.timeout", "must be a positive duration, got %q", p.Timeout.String()))
	}
}
