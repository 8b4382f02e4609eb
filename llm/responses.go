package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// This file speaks OpenAI's Responses API (POST /responses), which OpenAI's
// reasoning and Codex models need, and vLLM, Ollama, LM Studio, llama.cpp
// and DeepSeek also serve. The request is built with openai-go's
// responses package; the event stream is decoded here, like the Chat
// Completions one, so that a body cut before response.completed is an
// error and the reasoning items can be kept byte for byte.
//
// Requests are stateless (store: false): the whole conversation goes out
// each time, and the reasoning items a response returns (with their
// encrypted_content, asked for with include) go back, unchanged, before
// the function calls they led to — within a turn and across turns — so
// the model's reasoning carries over tool calls. They are kept as the
// assistant message's fsm.Opaque, which no other code reads.

// opaqueResponses names the Responses API's opaque data: a JSON array of
// reasoning items and phased assistant messages, as the server sent them
// less their "id" and "status" (a stateless request must not refer to
// stored items).
const opaqueResponses = "responses"

// streamResponses sends req to the Responses API and streams the answer.
func (p *OpenAI) streamResponses(ctx context.Context, req Request, emit func(fsm.Event), finish func(fsm.Event)) {
	for attempt := 0; ; attempt++ {
		body, err := p.responsesBody(req)
		if err != nil {
			finish(fsm.LlmError{Request: req.ID, Kind: fsm.ErrorBadRequest,
				Message: "cannot build the model request: " + err.Error()})
			return
		}
		x, fail := p.post(ctx, req.ID, "responses", body)
		if fail != nil {
			x.close()
			if attempt == 0 && p.refusedSummaries(*fail) {
				continue
			}
			finish(*fail)
			return
		}
		if x.body != nil {
			p.decodeResponses(ctx, x.sctx, req.ID, x.body, emit, finish)
		}
		x.close()
		return
	}
}

// refusedSummaries reports whether the server refused reasoning summaries
// (OpenAI asks organizations to be verified for them) while they were
// asked for: they are then never asked for again, and the request is sent
// once more.
func (p *OpenAI) refusedSummaries(e fsm.LlmError) bool {
	m := strings.ToLower(e.Message)
	if e.StatusCode != 400 || !strings.Contains(m, "summar") || !strings.Contains(m, "verified") {
		return false
	}
	p.dialect.mu.Lock()
	defer p.dialect.mu.Unlock()
	if p.noSummary {
		return false
	}
	p.noSummary = true
	return true
}

// responsesBody is the JSON body of req for the Responses API, with
// "stream": true.
func (p *OpenAI) responsesBody(req Request) ([]byte, error) {
	params, err := p.responsesParams(req)
	if err != nil {
		return nil, err
	}
	// params' own encoder, not json.Marshal, which would escape '<' and
	// '&' in the reasoning items sent back.
	b, err := params.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("unexpected request encoding %.40q", b)
	}
	return append(b[:len(b)-1], streamField...), nil
}

// responsesParams builds the request: the conversation as input items,
// the tools as function tools (strict off: loom's schemas have optional
// properties), store false, and for reasoning models the effort, a
// summary, and the encrypted reasoning.
func (p *OpenAI) responsesParams(req Request) (responses.ResponseNewParams, error) {
	model := p.cfg.Model
	if req.Model != "" {
		model = req.Model
	}
	params := responses.ResponseNewParams{
		Model: shared.ResponsesModel(model),
		Store: openai.Bool(false),
	}
	if p.cfg.MaxTokens > 0 {
		params.MaxOutputTokens = openai.Int(int64(p.cfg.MaxTokens))
	}
	effort := pickEffort(p.cfg.ReasoningEffort, req.ReasoningEffort)
	if p.sendsTemperature(model, effort) {
		params.Temperature = openai.Float(*p.cfg.Temperature)
	}
	if p.cfg.CacheKeys && req.CacheKey != "" {
		params.PromptCacheKey = openai.String(req.CacheKey)
	}
	p.askReasoning(&params, model, effort)
	items, err := responsesInput(req)
	if err != nil {
		return params, err
	}
	params.Input.OfInputItemList = items
	for _, t := range req.Tools {
		fn, err := responsesTool(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, responses.ToolUnionParam{OfFunction: &fn})
	}
	return params, nil
}

// askReasoning asks a reasoning model (or any model given an effort
// other than none) for its encrypted reasoning back, and for a summary
// unless the server refused summaries; it sends the effort when there is
// one.
func (p *OpenAI) askReasoning(params *responses.ResponseNewParams, model, effort string) {
	if isReasoningModel(model) || (effort != "" && effort != string(shared.ReasoningEffortNone)) {
		params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		p.dialect.mu.Lock()
		noSummary := p.noSummary
		p.dialect.mu.Unlock()
		if !noSummary && effort != string(shared.ReasoningEffortNone) {
			params.Reasoning.Summary = shared.ReasoningSummaryAuto
		}
	}
	if effort != "" {
		params.Reasoning.Effort = shared.ReasoningEffort(effort)
	}
}

// responsesInput is the conversation as input items; messages from
// req.TurnStart on are of the current turn.
func responsesInput(req Request) (responses.ResponseInputParam, error) {
	items := make(responses.ResponseInputParam, 0, len(req.Messages)+4)
	for i, m := range req.Messages {
		var err error
		if items, err = appendInputItems(items, m, req.Images, i >= req.TurnStart); err != nil {
			return items, fmt.Errorf("message %d: %w", i, err)
		}
	}
	return items, nil
}

// appendInputItems appends the input items of one conversation message:
// a message item, or for an assistant message its reasoning items (when a
// Responses server wrote them), its text (the server's message item when
// it had a phase), then its function calls; a tool
// result is a function_call_output paired by call_id. A user message's
// pictures are read through images. Plain reasoning items (their text
// in the clear, respItem.plainReasoning) go back only inTurn: for a
// message of the current turn.
func appendInputItems(items responses.ResponseInputParam, m fsm.Message, images ImageSource, inTurn bool) (responses.ResponseInputParam, error) {
	switch m.Role {
	case fsm.RoleSystem:
		return append(items, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleSystem)), nil
	case fsm.RoleUser:
		it, err := responsesUserItem(m, images)
		if err != nil {
			return items, err
		}
		return append(items, it), nil
	case fsm.RoleTool:
		if m.ToolCallID == "" {
			return items, errors.New("tool message without tool_call_id")
		}
		out := responses.ResponseInputItemParamOfFunctionCallOutput(m.Content)
		out.OfFunctionCallOutput.CallID = openai.String(m.ToolCallID)
		return append(items, out), nil
	case fsm.RoleAssistant:
		return appendAssistantItems(items, m, inTurn), nil
	}
	return items, fmt.Errorf("unknown role %q", m.Role)
}

// appendAssistantItems appends an assistant message's items: the ones a
// Responses server wrote (reasoning, and its message item with a phase;
// plain reasoning only inTurn), its text unless the server's message
// item carried it, then its function calls.
func appendAssistantItems(items responses.ResponseInputParam, m fsm.Message, inTurn bool) responses.ResponseInputParam {
	phased := false // the server's own message item, with its phase, went back
	if m.Opaque.API == opaqueResponses {
		var kept []json.RawMessage
		if err := json.Unmarshal([]byte(m.Opaque.Data), &kept); err == nil {
			for _, raw := range kept {
				var it respItem
				ok := json.Unmarshal(raw, &it) == nil
				if ok && it.plainReasoning() && !inTurn {
					continue
				}
				phased = phased || ok && it.Type == "message"
				items = append(items, param.Override[responses.ResponseInputItemUnionParam](raw))
			}
		}
	}
	if !phased && (m.Content != "" || len(m.ToolCalls) == 0) {
		items = append(items, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleAssistant))
	}
	for _, c := range m.ToolCalls {
		items = append(items, responses.ResponseInputItemParamOfFunctionCall(c.Arguments, c.ID, c.Name))
	}
	return items
}

// responsesTool converts one tool schema; its parameters' top-level values
// are kept as raw JSON.
func responsesTool(t ToolSchema) (responses.FunctionToolParam, error) {
	fn := responses.FunctionToolParam{Name: t.Name, Strict: openai.Bool(false)}
	if t.Description != "" {
		fn.Description = openai.String(t.Description)
	}
	raw := bytes.TrimSpace(t.Parameters)
	if len(raw) == 0 {
		raw = []byte(`{"type":"object","properties":{}}`)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return fn, fmt.Errorf("tool %q: parameters are not a JSON object", t.Name)
	}
	fn.Parameters = make(map[string]any, len(fields))
	for k, v := range fields {
		fn.Parameters[k] = v
	}
	return fn, nil
}

// withoutKeys returns the JSON object raw without the given top-level
// keys, every other member's bytes unchanged and in order.
func withoutKeys(raw []byte, drop ...string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	out := []byte{'{'}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		skip := false
		for _, d := range drop {
			skip = skip || key == d
		}
		if skip {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(key)
		out = append(out, k...)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}'), nil
}
