package llm

import (
	"strings"

	"github.com/openai/openai-go/v3"
)

// UsesMaxCompletionTokens reports whether model is one of OpenAI's
// reasoning models (o1, o3, o4-mini, gpt-5 and their dated or sized
// variants, also behind a router's "openai/" prefix), which refuse
// max_tokens and want max_completion_tokens. Every other model gets
// max_tokens, which all OpenAI-compatible local servers understand.
func UsesMaxCompletionTokens(model string) bool {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if strings.HasPrefix(name, "gpt-5") {
		return true
	}
	// o1, o1-mini, o3-2025-04-16, o4-mini…: "o", digits, then the end or
	// a dash.
	if len(name) < 2 || name[0] != 'o' {
		return false
	}
	i := 1
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	return i > 1 && (i == len(name) || name[i] == '-')
}

// setMaxTokens bounds the completion in the field the configuration or
// the model's name calls for.
func (p *OpenAI) setMaxTokens(d *Dialect, params *openai.ChatCompletionNewParams) {
	if p.cfg.MaxTokens <= 0 {
		return
	}
	n := openai.Int(int64(p.cfg.MaxTokens))
	field := p.cfg.MaxTokensField
	if field == "" || field == "auto" {
		field = d.MaxTokensField
	}
	switch field {
	case "max_completion_tokens":
		params.MaxCompletionTokens = n
	case "max_tokens":
		params.MaxTokens = n
	default:
		if UsesMaxCompletionTokens(p.cfg.Model) {
			params.MaxCompletionTokens = n
		} else {
			params.MaxTokens = n
		}
	}
}
