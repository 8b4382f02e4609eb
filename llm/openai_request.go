package llm

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// buildParams turns req into Chat Completions parameters: messages with
// tool_calls and tool_call_id, tools as
// {"type":"function","function":{name,description,parameters}}, and
// stream_options.include_usage. The caller adds "stream": true.
func (p *OpenAI) buildParams(d *Dialect, req Request) (openai.ChatCompletionNewParams, error) {
	model := p.cfg.Model
	if req.Model != "" {
		model = req.Model
	}
	params := openai.ChatCompletionNewParams{
		Model: shared.ChatModel(model),
	}
	if !d.NoStreamUsage {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	p.setMaxTokens(d, &params)
	effort := pickEffort(p.cfg.ReasoningEffort, req.ReasoningEffort)
	if p.sendsTemperature(model, effort) {
		params.Temperature = openai.Float(*p.cfg.Temperature)
	}
	setChatEffort(d, effort, &params)
	if p.cfg.CacheKeys && req.CacheKey != "" {
		params.PromptCacheKey = openai.String(req.CacheKey)
	}
	params.Messages = make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages))
	for i, m := range req.Messages {
		msg, err := wireMessage(m, d.echo(i >= req.TurnStart), req.Images)
		if err != nil {
			return params, fmt.Errorf("message %d: %w", i, err)
		}
		params.Messages = append(params.Messages, msg)
	}
	for _, t := range req.Tools {
		tool, err := wireTool(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	return params, nil
}

// setChatEffort sends the effort (model.reasoning_effort, or the
// conversation's) as the dialect spells it:
// reasoning_effort (OpenAI, vLLM, Ollama, DeepSeek), OpenRouter's
// reasoning.effort; DeepSeek's thinking is turned off with
// thinking.type "disabled" rather than an effort.
func setChatEffort(d *Dialect, e string, params *openai.ChatCompletionNewParams) {
	if e == "" {
		return
	}
	switch {
	case d.Name == "openrouter":
		params.SetExtraFields(map[string]any{"reasoning": map[string]string{"effort": e}})
	case d.Name == "deepseek" && e == string(shared.ReasoningEffortNone):
		params.SetExtraFields(map[string]any{"thinking": map[string]string{"type": "disabled"}})
	default:
		params.ReasoningEffort = shared.ReasoningEffort(e)
	}
}

// echo says what an assistant message sends back besides its text and
// calls.
type echo struct {
	reasoning, signatures, details bool
}

// echo returns what the dialect sends back with a message of the current
// turn (inTurn) or of an earlier one: reasoning in every turn (DeepSeek
// wants the reasoning of a tool-using turn in all later requests, the
// compaction request included), signatures within the turn.
func (d *Dialect) echo(inTurn bool) echo {
	return echo{reasoning: d.EchoReasoning, signatures: d.EchoSignatures && inTurn, details: d.EchoDetails}
}

// wireMessage converts one conversation message, with its reasoning and
// its calls' signatures when e says so.
func wireMessage(m fsm.Message, e echo, images ImageSource) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case fsm.RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case fsm.RoleUser:
		return userMessage(m, images)
	case fsm.RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool message without tool_call_id")
		}
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case fsm.RoleAssistant:
		return openai.ChatCompletionMessageParamUnion{OfAssistant: assistantMessage(m, e)}, nil
	default:
		return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
	}
}

// assistantMessage converts an assistant message: its text, its calls,
// and what e says to echo back.
func assistantMessage(m fsm.Message, e echo) *openai.ChatCompletionAssistantMessageParam {
	var a openai.ChatCompletionAssistantMessageParam
	// With tool calls the content is optional; omit it when empty, as
	// some servers reject an empty string next to tool_calls.
	if m.Content != "" || len(m.ToolCalls) == 0 {
		a.Content.OfString = openai.String(m.Content)
	}
	for _, c := range m.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: wireToolCallParam(c, e)})
	}
	if extra := echoedFields(m, e); len(extra) > 0 {
		a.SetExtraFields(extra)
	}
	return &a
}

// wireToolCallParam converts one call, with its thought signature when e
// says so.
func wireToolCallParam(c fsm.ToolCall, e echo) *openai.ChatCompletionMessageFunctionToolCallParam {
	call := &openai.ChatCompletionMessageFunctionToolCallParam{
		ID: c.ID,
		Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
			Name:      c.Name,
			Arguments: c.Arguments,
		},
	}
	if e.signatures && c.Signature != "" {
		call.SetExtraFields(map[string]any{"extra_content": map[string]any{
			"google": map[string]string{"thought_signature": c.Signature}}})
	}
	return call
}

// echoedFields are the assistant message's extra fields the server wants
// echoed back: reasoning_content, reasoning_details.
//
// DeepSeek refuses a tool-calling message without its reasoning_content,
// and takes an empty one as missing (HTTP 400), though its V4 returns
// tool calls with no reasoning: such a message carries one space, as
// LiteLLM's _fill_reasoning_content sends. It ignores the reasoning of
// other messages, which is sent when kept.
func echoedFields(m fsm.Message, e echo) map[string]any {
	extra := map[string]any{}
	switch {
	case e.reasoning && m.Reasoning != "":
		extra["reasoning_content"] = m.Reasoning
	case e.reasoning && len(m.ToolCalls) > 0:
		extra["reasoning_content"] = " "
	}
	if e.details && m.Opaque.API == opaqueOpenRouter {
		extra["reasoning_details"] = json.RawMessage(m.Opaque.Data)
	}
	return extra
}

// wireTool converts one tool schema. The top-level keys of Parameters are
// kept as raw JSON, so nested schemas go out byte for byte.
func wireTool(t ToolSchema) (openai.ChatCompletionToolUnionParam, error) {
	fn := shared.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		fn.Description = openai.String(t.Description)
	}
	raw := bytes.TrimSpace(t.Parameters)
	if len(raw) == 0 {
		raw = []byte(`{"type":"object","properties":{}}`)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %q: parameters are not a JSON object", t.Name)
	}
	fn.Parameters = make(shared.FunctionParameters, len(fields))
	for k, v := range fields {
		fn.Parameters[k] = v
	}
	return openai.ChatCompletionFunctionTool(fn), nil
}
