package llm

import (
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3/shared"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// The wire APIs a model may be spoken to with (model.api).
const (
	// APIChat is the Chat Completions API (POST /chat/completions).
	APIChat = "chat"
	// APIResponses is OpenAI's Responses API (POST /responses).
	APIResponses = "responses"
	// APIMessages is Anthropic's Messages API (POST /v1/messages).
	APIMessages = "messages"
)

// The reasoning efforts model.reasoning_effort accepts, as openai-go's
// shared.ReasoningEffort spells them.
var reasoningEfforts = []string{
	string(shared.ReasoningEffortNone), string(shared.ReasoningEffortMinimal),
	string(shared.ReasoningEffortLow), string(shared.ReasoningEffortMedium),
	string(shared.ReasoningEffortHigh), string(shared.ReasoningEffortXhigh),
	string(shared.ReasoningEffortMax),
}

// ReasoningEfforts lists the values of model.reasoning_effort.
func ReasoningEfforts() []string { return append([]string(nil), reasoningEfforts...) }

// ValidReasoningEffort reports whether e is "" or one of ReasoningEfforts.
func ValidReasoningEffort(e string) bool {
	if e == "" {
		return true
	}
	for _, v := range reasoningEfforts {
		if e == v {
			return true
		}
	}
	return false
}

// DefaultAPI is the wire API a model is spoken to with when model.api is
// not set: the Responses API for OpenAI's reasoning and Codex models on
// api.openai.com (gpt-5*, o1/o3/o4…, *codex*: the only API that carries
// their reasoning between tool calls, and the only one some of them
// answer), the Messages API for Anthropic's own API, Chat Completions
// everywhere else.
func DefaultAPI(baseURL, model string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return APIChat
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case host == "api.openai.com" && (UsesMaxCompletionTokens(model) || strings.Contains(strings.ToLower(model), "codex")):
		return APIResponses
	case host == "api.anthropic.com":
		return APIMessages
	}
	return APIChat
}

// API returns the wire API used for model ("" the configured one):
// model.api when set, else what a 404 "only supported in v1/responses"
// taught, else DefaultAPI.
func (p *OpenAI) API(model string) string {
	if model == "" {
		model = p.cfg.Model
	}
	if p.cfg.API != "" {
		return p.cfg.API
	}
	p.dialect.mu.Lock()
	learned := p.responsesOnly[model]
	p.dialect.mu.Unlock()
	if learned {
		return APIResponses
	}
	if api := DefaultAPI(p.cfg.BaseURL, model); api != APIMessages {
		return api
	}
	return APIChat
}

// saysResponsesOnly reports whether an error says the model is served
// only by the Responses API (OpenAI's 404 "This model is only supported
// in v1/responses and not in v1/chat/completions.").
func saysResponsesOnly(e fsm.LlmError) bool {
	m := strings.ToLower(e.Message)
	return e.StatusCode == 404 && strings.Contains(m, "v1/responses") && strings.Contains(m, "only supported")
}

// switchToResponses reports whether a Chat Completions request that
// failed with e should be sent again to the Responses API: the server
// said the model is served only there, and model.api is not set. The
// model is then remembered as a Responses model.
func (p *OpenAI) switchToResponses(model string, e fsm.LlmError) bool {
	if p.cfg.API != "" || !saysResponsesOnly(e) {
		return false
	}
	if model == "" {
		model = p.cfg.Model
	}
	p.dialect.mu.Lock()
	defer p.dialect.mu.Unlock()
	if p.responsesOnly == nil {
		p.responsesOnly = make(map[string]bool)
	}
	p.responsesOnly[model] = true
	return true
}

// isReasoningModel reports whether model reasons by default and refuses
// sampling parameters (temperature) unless its effort is "none": OpenAI's
// o-series and gpt-5 families, and Codex models.
func isReasoningModel(model string) bool {
	return UsesMaxCompletionTokens(model) || strings.Contains(strings.ToLower(model), "codex")
}

// sendsTemperature reports whether a configured temperature may be sent to
// model with effort: reasoning models refuse it unless their reasoning
// is off.
func (p *OpenAI) sendsTemperature(model, effort string) bool {
	if p.cfg.Temperature == nil {
		return false
	}
	return !isReasoningModel(model) || effort == string(shared.ReasoningEffortNone)
}

// pickEffort is the effort a request is sent with: the conversation's
// (Request.ReasoningEffort) when it chose one, else the configured one.
func pickEffort(configured, conversation string) string {
	if conversation != "" {
		return conversation
	}
	return configured
}
