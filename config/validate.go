package config

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
)

// Validate checks values and the relations between them, one section
// after another. The error names the source, line and key of each
// problem.
func (c Config) Validate() error {
	var errs []error
	add := func(e *Error) { errs = append(errs, e) }
	c.validateEndpoint(add)
	c.validateRequests(add)
	c.validateAgent(add)
	c.validateTools(add)
	c.validateFetch(add)
	c.validateDiagnostics(add)
	if c.Journal.Keep < 0 {
		add(c.keyErr("journal.keep", "must be >= 0, got %d", c.Journal.Keep))
	}
	c.positive(add, "journal.max_age", c.Journal.MaxAge)
	for _, f := range c.Trust.Folders {
		if !filepath.IsAbs(f) {
			add(c.keyErr("trust.folders", "%q is not an absolute path", f))
		}
	}
	c.validateMCP(add)
	c.validateSandbox(add)
	c.validateCompletion(add)
	c.validateSubagents(add)
	c.validateWorktrees(add)
	return errors.Join(errs...)
}

// positive adds an error when the duration at key is not positive.
func (c Config) positive(add func(*Error), key string, d Duration) {
	if d.Duration <= 0 {
		add(c.keyErr(key, "must be a positive duration, got %q", d.String()))
	}
}

// validateEndpoint checks where the model is asked: the provider, its
// URL, the server family and the API.
func (c Config) validateEndpoint(add func(*Error)) {
	m := c.Model
	switch m.Provider {
	case ProviderOpenAI, ProviderAnthropic:
		if err := checkURL(m.BaseURL); err != nil {
			add(c.keyErr("model.base_url", "%v", err))
		}
	case ProviderScript:
		if m.Script == "" {
			add(c.keyErr("model.provider", `provider "script" requires model.script, the path of a scripted-model file`))
		}
		if m.BaseURL != "" {
			if err := checkURL(m.BaseURL); err != nil {
				add(c.keyErr("model.base_url", "%v", err))
			}
		}
	default:
		add(c.keyErr("model.provider", "unknown provider %q: want %q, %q or %q", m.Provider, ProviderOpenAI, ProviderAnthropic, ProviderScript))
	}
	switch m.Server {
	case "", "ollama", "llamacpp", "vllm", "lmstudio", "deepseek", "gemini", "mistral", "openrouter", "anthropic", "openai":
	default:
		add(c.keyErr("model.server", "unknown server %q: want one of ollama, llamacpp, vllm, lmstudio, deepseek, gemini, mistral, openrouter, anthropic, openai (or leave it out to detect it)", m.Server))
	}
	switch m.API {
	case "", APIChat, APIResponses, APIMessages:
	default:
		add(c.keyErr("model.api", "unknown API %q: want %q, %q or %q (or leave it out to choose per model)", m.API, APIChat, APIResponses, APIMessages))
	}
	c.positive(add, "model.idle_timeout", m.IdleTimeout)
	c.positive(add, "model.first_byte_timeout", m.FirstByteTimeout)
}

// validateRequests checks what each request to the model asks and
// bounds: images, the context window, tokens, effort, the answer's size
// and the temperature.
func (c Config) validateRequests(add func(*Error)) {
	m := c.Model
	switch m.Images {
	case "", "auto", "on", "off":
	default:
		add(c.keyErr("model.images", `must be "auto", "on" or "off", got %q`, m.Images))
	}
	if m.ContextWindow < 0 {
		add(c.keyErr("model.context_window", "must be >= 0 (0: asked from the server, else known from the model's name, else 32768), got %d", m.ContextWindow))
	}
	if m.MaxTokens < 0 {
		add(c.keyErr("model.max_tokens", "must be >= 0 (0 leaves it to the server), got %d", m.MaxTokens))
	}
	switch m.MaxTokensField {
	case "", MaxTokensFieldAuto, MaxTokensFieldClassic, MaxTokensFieldCompletion:
	default:
		add(c.keyErr("model.max_tokens_field", "unknown field %q: want %q, %q or %q", m.MaxTokensField,
			MaxTokensFieldAuto, MaxTokensFieldClassic, MaxTokensFieldCompletion))
	}
	if !slices.Contains(append([]string{""}, ReasoningEfforts...), m.ReasoningEffort) {
		add(c.keyErr("model.reasoning_effort", "unknown effort %q: want one of %s", m.ReasoningEffort, strings.Join(ReasoningEfforts, ", ")))
	}
	if m.MaxAnswerBytes <= 0 {
		add(c.keyErr("model.max_answer_bytes", "must be > 0, got %d", m.MaxAnswerBytes))
	}
	if m.Temperature != nil && *m.Temperature < 0 {
		add(c.keyErr("model.temperature", "must be >= 0, got %v", *m.Temperature))
	}
}

// validateAgent checks [agent]: the turn's limits, the retries and how
// the conversation is kept within the context window.
func (c Config) validateAgent(add func(*Error)) {
	a := c.Agent
	if a.ElideAfterTurns < 0 {
		add(c.keyErr("agent.elide_after_turns", "must be >= 0 (0 never elides old tool results), got %d", a.ElideAfterTurns))
	}
	if a.CompactAt <= 0 || a.CompactAt > 1 {
		add(c.keyErr("agent.compact_at", "must be in (0, 1], a fraction of the context window, got %v", a.CompactAt))
	}
	if a.MaxRetries < 0 {
		add(c.keyErr("agent.max_retries", "must be >= 0, got %d", a.MaxRetries))
	}
	if a.MaxIterations < 1 {
		add(c.keyErr("agent.max_iterations", "must be >= 1, got %d", a.MaxIterations))
	}
	c.positive(add, "agent.retry_base", a.RetryBase)
	c.positive(add, "agent.retry_max", a.RetryMax)
	if a.RetryBase.Duration > 0 && a.RetryMax.Duration > 0 && a.RetryMax.Duration < a.RetryBase.Duration {
		add(c.keyErr(c.blame("agent.retry_max", "agent.retry_base"),
			"agent.retry_max (%v) must be >= agent.retry_base (%v)", a.RetryMax, a.RetryBase))
	}
}

// validateTools checks [tools]: the policies, the edit mode and the
// commands' timeouts and output.
func (c Config) validateTools(add func(*Error)) {
	t := c.Tools
	switch t.Bash {
	case PolicyAllow, PolicyAsk, PolicyDeny:
	default:
		add(c.keyErr("tools.bash", "invalid policy %q: want %q, %q or %q", t.Bash, PolicyAllow, PolicyAsk, PolicyDeny))
	}
	switch t.Edits {
	case EditsAuto, EditsReview:
	default:
		add(c.keyErr("tools.edits", "invalid edit mode %q: want %q or %q", t.Edits, EditsAuto, EditsReview))
	}
	if t.PlanCommands != PlanCommandsOff && t.PlanCommands != PlanCommandsReadOnly {
		add(c.keyErr("tools.plan_commands", "invalid value %q: want %q or %q", t.PlanCommands, PlanCommandsOff, PlanCommandsReadOnly))
	}
	c.positive(add, "tools.bash_timeout", t.BashTimeout)
	c.positive(add, "tools.bash_max_timeout", t.BashMaxTimeout)
	c.positive(add, "tools.approval_timeout", t.ApprovalTimeout)
	if t.BashTimeout.Duration > 0 && t.BashMaxTimeout.Duration > 0 && t.BashMaxTimeout.Duration < t.BashTimeout.Duration {
		add(c.keyErr(c.blame("tools.bash_max_timeout", "tools.bash_timeout"),
			"tools.bash_max_timeout (%v) must be >= tools.bash_timeout (%v)", t.BashMaxTimeout, t.BashTimeout))
	}
	if t.MaxOutputBytes <= 0 {
		add(c.keyErr("tools.max_output_bytes", "must be > 0, got %d", t.MaxOutputBytes))
	}
}
