package workspace

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// NewProvider builds the model provider that cfg describes, reading the
// API key from the environment variable it names. It fails, saying how to
// fix it, when no model is usable.
func NewProvider(cfg config.Config, getenv func(string) string) (llm.Provider, error) {
	if err := cfg.ModelReady(getenv); err != nil {
		return nil, err
	}
	switch cfg.Model.Provider {
	case config.ProviderScript:
		return loadScript(cfg.Model.Script)
	case config.ProviderAnthropic:
		return newAnthropic(cfg, getenv)
	case config.ProviderOpenAI:
		if usesMessages(cfg.Model) {
			return newAnthropic(cfg, getenv)
		}
		return llm.NewOpenAI(llm.OpenAIConfig{
			BaseURL:          cfg.Model.BaseURL,
			Model:            cfg.Model.Name,
			APIKey:           getenv(cfg.Model.APIKeyEnv),
			MaxTokens:        cfg.Model.MaxTokens,
			MaxTokensField:   cfg.Model.MaxTokensField,
			Temperature:      cfg.Model.Temperature,
			Headers:          cfg.Model.Headers,
			IdleTimeout:      cfg.Model.IdleTimeout.Duration,
			FirstByteTimeout: cfg.Model.FirstByteTimeout.Duration,
			Server:           cfg.Model.Server,
			MaxAnswerBytes:   cfg.Model.MaxAnswerBytes,
			API:              cfg.Model.API,
			ReasoningEffort:  cfg.Model.ReasoningEffort,
			CacheKeys:        isOpenAIHost(cfg.Model.BaseURL),
		})
	}
	return nil, fmt.Errorf("model.provider %q is not known (use %q, %q or %q)", cfg.Model.Provider, config.ProviderOpenAI, config.ProviderAnthropic, config.ProviderScript)
}

// usesMessages reports whether the model is spoken to with Anthropic's
// Messages API: api = "messages", or Anthropic's own API when api is not
// set.
func usesMessages(m config.Model) bool {
	return m.API == config.APIMessages || (m.API == "" && llm.DefaultAPI(m.BaseURL, m.Name) == llm.APIMessages)
}

// newAnthropic builds the Messages API provider.
func newAnthropic(cfg config.Config, getenv func(string) string) (llm.Provider, error) {
	return llm.NewAnthropic(llm.AnthropicConfig{
		BaseURL:          cfg.Model.BaseURL,
		Model:            cfg.Model.Name,
		APIKey:           getenv(cfg.Model.APIKeyEnv),
		MaxTokens:        cfg.Model.MaxTokens,
		ReasoningEffort:  cfg.Model.ReasoningEffort,
		Headers:          cfg.Model.Headers,
		IdleTimeout:      cfg.Model.IdleTimeout.Duration,
		FirstByteTimeout: cfg.Model.FirstByteTimeout.Duration,
		MaxAnswerBytes:   cfg.Model.MaxAnswerBytes,
	})
}

// isOpenAIHost reports whether baseURL is OpenAI's own API, whose prompt
// cache routes by prompt_cache_key.
func isOpenAIHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

func loadScript(path string) (llm.Provider, error) {
	return llm.LoadScript(path)
}

// wireAPI names the wire API the conversation's model is spoken to with,
// for loom.status: "chat", "responses", "messages", or "" for a scripted
// model. m is the conversation's machine (its model).
func (s *settings) wireAPI(m *fsm.Machine) string {
	switch {
	case s.provider == nil || s.cfg.Model.Provider == config.ProviderScript:
		return ""
	case s.cfg.Model.Provider == config.ProviderAnthropic || usesMessages(s.cfg.Model):
		return llm.APIMessages
	}
	if p, ok := s.provider.(interface{ API(model string) string }); ok {
		return p.API(modelName(m, s.cfg))
	}
	return ""
}
