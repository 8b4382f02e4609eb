package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// respEvent is the part of a Responses API stream event the provider
// reads (the events are documented with openai-go's
// responses.ResponseStreamEventUnion).
type respEvent struct {
	Type         string          `json:"type"`
	Delta        string          `json:"delta"`
	OutputIndex  int             `json:"output_index"`
	ItemID       string          `json:"item_id"`
	SummaryIndex int             `json:"summary_index"`
	Arguments    string          `json:"arguments"`
	Item         json.RawMessage `json:"item"`
	Response     *respResponse   `json:"response"`
}

// respResponse is the response object of response.completed,
// response.incomplete and response.failed.
type respResponse struct {
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	Usage             *respUsage        `json:"usage"`
	Error             json.RawMessage   `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

type respUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	TotalTokens        int64 `json:"total_tokens"`
	InputTokensDetails *struct {
		CachedTokens *int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens *int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func (u *respUsage) usage() fsm.Usage {
	out := fsm.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
	if u.InputTokensDetails != nil {
		out.CachedTokens = u.InputTokensDetails.CachedTokens
	}
	if u.OutputTokensDetails != nil {
		out.ReasoningTokens = u.OutputTokensDetails.ReasoningTokens
	}
	return out
}

// respItem is the part of an output item the provider reads.
type respItem struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
	// Content is a reasoning item's reasoning text (vLLM's gpt-oss
	// analysis), when the server sends it in the clear.
	Content json.RawMessage `json:"content"`
	// Phase labels an assistant message "commentary" or
	// "final_answer" (gpt-5.3-codex and later), to be sent back.
	Phase string `json:"phase"`
}

// kept reports whether the output item goes back in later requests: a
// reasoning item with its encrypted content, or an assistant message
// with a phase (OpenAI: "preserve and resend phase on all assistant
// messages — dropping it can degrade performance").
func (it respItem) kept() bool {
	return it.Type == "reasoning" && it.EncryptedContent != "" || it.Type == "message" && it.Phase != "" || it.plainReasoning()
}

// plainReasoning reports whether the item is a reasoning item that
// carries its text as content and no encrypted_content (vLLM's gpt-oss):
// it goes back within its turn (OpenAI's gpt-oss guidance: keep the
// analysis until the final message) with its id and summary, which vLLM
// validates, and never with encrypted_content.
func (it respItem) plainReasoning() bool {
	c := string(bytes.TrimSpace(it.Content))
	return it.Type == "reasoning" && it.EncryptedContent == "" && c != "" && c != "null" && c != "[]"
}

// keptBytes is an item as it goes back: without id and status (stateless
// requests refer to no stored item), except for plain reasoning, which
// keeps its id, loses encrypted_content, and has a summary.
func keptBytes(raw json.RawMessage, it respItem) ([]byte, error) {
	if !it.plainReasoning() {
		return withoutKeys(raw, "id", "status")
	}
	out, err := withoutKeys(raw, "encrypted_content", "status")
	if err != nil {
		return nil, err
	}
	var has map[string]json.RawMessage
	if json.Unmarshal(out, &has) == nil && has["summary"] == nil {
		out = append(bytes.TrimSuffix(bytes.TrimRight(out, " \n"), []byte("}")), []byte(`,"summary":[]}`)...)
	}
	return out, nil
}

// respCalls assembles the function calls of a response by output index.
type respCalls struct {
	calls   []fsm.ToolCall
	args    []bytes.Buffer
	byIndex map[int]int
	byItem  map[string]int
}

// start records a function_call item at output index i.
func (c *respCalls) start(i int, it respItem) int {
	if pos, ok := c.byIndex[i]; ok {
		return pos
	}
	if c.byIndex == nil {
		c.byIndex, c.byItem = make(map[int]int), make(map[string]int)
	}
	pos := len(c.calls)
	c.calls = append(c.calls, fsm.ToolCall{ID: it.CallID, Name: it.Name})
	c.args = append(c.args, bytes.Buffer{})
	c.byIndex[i] = pos
	if it.ID != "" {
		c.byItem[it.ID] = pos
	}
	return pos
}

// find returns the call of an event, by output index or item id.
func (c *respCalls) find(ev *respEvent) (int, bool) {
	if pos, ok := c.byIndex[ev.OutputIndex]; ok {
		return pos, true
	}
	pos, ok := c.byItem[ev.ItemID]
	return pos, ok
}

// respDecoder is the state of one Responses stream.
type respDecoder struct {
	reqID    uint64
	calls    respCalls
	kept     []json.RawMessage // reasoning items from output_item.done
	answered int
	// summaryPart is the (output index, summary index) of the last
	// reasoning summary text, to separate the parts of a summary.
	lastSummary [2]int
	summarised  bool
}

// decodeResponses reads a Responses event stream, emitting deltas as they
// come and one final event.
func (p *OpenAI) decodeResponses(ctx, sctx context.Context, reqID uint64, body io.Reader,
	emit func(fsm.Event), finish func(fsm.Event)) {
	st := respDecoder{reqID: reqID}
	d := p.Dialect()
	decodeEvents(ctx, sctx, reqID, body, d, p.cfg.IdleTimeout, "response.completed", finish, func(ev *respEvent, data []byte) (fsm.Event, bool) {
		return p.respEvent(d, &st, ev, data, emit)
	})
}

// respEvent handles one event; it returns the final event when the
// response ends.
func (p *OpenAI) respEvent(d *Dialect, st *respDecoder, ev *respEvent, data []byte, emit func(fsm.Event)) (fsm.Event, bool) {
	switch ev.Type {
	case "response.output_text.delta":
		if e, over := st.count(p, len(ev.Delta)); over {
			return e, true
		}
		if ev.Delta != "" {
			emit(fsm.LlmTextDelta{Request: st.reqID, Text: ev.Delta})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if e, over := st.count(p, len(ev.Delta)); over {
			return e, true
		}
		if text := st.reasoningText(ev); text != "" {
			emit(fsm.LlmReasoningDelta{Request: st.reqID, Text: text})
		}
	case "response.output_item.added":
		st.itemAdded(ev, emit)
	case "response.function_call_arguments.delta":
		if pos, ok := st.calls.find(ev); ok {
			st.calls.args[pos].WriteString(ev.Delta)
			emit(fsm.LlmToolCallDelta{Request: st.reqID, Index: pos, ArgumentsDelta: ev.Delta})
		}
	case "response.output_item.done":
		st.itemDone(ev)
	case "response.completed", "response.incomplete":
		return st.completed(ev), true
	case "response.failed":
		return streamErrorEvent(d, st.reqID, failedPayload(ev, data)), true
	case "error":
		return streamErrorEvent(d, st.reqID, data), true
	}
	return nil, false
}

// reasoningText is the reasoning a delta adds: a new part of the
// summary starts on a paragraph of its own.
func (st *respDecoder) reasoningText(ev *respEvent) string {
	text := ev.Delta
	at := [2]int{ev.OutputIndex, ev.SummaryIndex}
	if st.summarised && at != st.lastSummary && text != "" {
		text = "\n\n" + text // a new part of the summary
	}
	st.lastSummary, st.summarised = at, true
	return text
}

// itemAdded starts a function call when its output item is added.
func (st *respDecoder) itemAdded(ev *respEvent, emit func(fsm.Event)) {
	var it respItem
	if json.Unmarshal(ev.Item, &it) == nil && it.Type == "function_call" {
		pos := st.calls.start(ev.OutputIndex, it)
		st.calls.args[pos].WriteString(it.Arguments)
		emit(fsm.LlmToolCallDelta{Request: st.reqID, Index: pos, ID: it.CallID, Name: it.Name, ArgumentsDelta: it.Arguments})
	}
}

// failedPayload is the error body of response.failed: the response's
// error when it has one, else the whole event.
func failedPayload(ev *respEvent, data []byte) []byte {
	if ev.Response != nil && len(ev.Response.Error) > 0 && string(ev.Response.Error) != "null" {
		payload, _ := json.Marshal(map[string]json.RawMessage{"error": ev.Response.Error})
		return payload
	}
	return data
}

// count adds n bytes of answer, failing past the configured cap.
func (st *respDecoder) count(p *OpenAI, n int) (fsm.Event, bool) {
	st.answered += n
	if st.answered > p.cfg.MaxAnswerBytes {
		return fsm.LlmError{Request: st.reqID, Kind: fsm.ErrorStream,
			Message: fmt.Sprintf("the answer passed %s (model.max_answer_bytes): the stream was cut; ask for less at once, or raise the limit", byteSize(p.cfg.MaxAnswerBytes))}, true
	}
	return nil, false
}

// itemDone takes a finished output item: a function call's final
// arguments, or an item to send back (respItem.kept).
func (st *respDecoder) itemDone(ev *respEvent) {
	var it respItem
	if json.Unmarshal(ev.Item, &it) != nil {
		return
	}
	switch it.Type {
	case "function_call":
		pos := st.calls.start(ev.OutputIndex, it)
		c := &st.calls.calls[pos]
		if it.CallID != "" {
			c.ID = it.CallID
		}
		if it.Name != "" {
			c.Name = it.Name
		}
		if it.Arguments != "" || st.calls.args[pos].Len() == 0 {
			st.calls.args[pos].Reset()
			st.calls.args[pos].WriteString(it.Arguments)
		}
	case "reasoning", "message":
		if it.kept() {
			st.kept = append(st.kept, append(json.RawMessage(nil), ev.Item...))
		}
	}
}

// finishReason is the response's, in Chat Completions' words: stop,
// length for max_output_tokens, else the reason it was incomplete.
func (r *respResponse) finishReason() string {
	if r.IncompleteDetails == nil {
		return "stop"
	}
	switch r.IncompleteDetails.Reason {
	case "max_output_tokens":
		return "length"
	case "":
		return "stop"
	}
	return r.IncompleteDetails.Reason
}

// keptItems are the items of output that are kept (respItem.kept).
func keptItems(output []json.RawMessage) []json.RawMessage {
	var kept []json.RawMessage
	for _, raw := range output {
		var it respItem
		if json.Unmarshal(raw, &it) == nil && it.kept() {
			kept = append(kept, raw)
		}
	}
	return kept
}

// keptOpaque is the opaque data that carries the kept items back, their
// bytes as keptBytes leaves them; zero when none is kept.
func keptOpaque(items []json.RawMessage) fsm.Opaque {
	var keep [][]byte
	for _, raw := range items {
		var it respItem
		if json.Unmarshal(raw, &it) != nil || !it.kept() {
			continue
		}
		if stripped, err := keptBytes(raw, it); err == nil {
			keep = append(keep, stripped)
		}
	}
	if len(keep) == 0 {
		return fsm.Opaque{}
	}
	// Joined by hand: json.Marshal would re-escape the items' text.
	return fsm.Opaque{API: opaqueResponses, Data: "[" + string(bytes.Join(keep, []byte{','})) + "]"}
}

// completed builds the LlmCompleted of response.completed or
// response.incomplete. The items kept (reasoning items with encrypted
// content, assistant messages with a phase: respItem.kept) are those of
// the final response object when it lists its output (it has every item
// whole), else those of output_item.done, in output order.
func (st *respDecoder) completed(ev *respEvent) fsm.LlmCompleted {
	done := fsm.LlmCompleted{Request: st.reqID, FinishReason: "stop"}
	items := st.kept
	if r := ev.Response; r != nil {
		if r.Usage != nil {
			done.Usage = r.Usage.usage()
		}
		done.FinishReason = r.finishReason()
		if fromOutput := keptItems(r.Output); len(fromOutput) > 0 {
			items = fromOutput
		}
	}
	done.Opaque = keptOpaque(items)
	if len(st.calls.calls) > 0 {
		done.ToolCalls = make([]fsm.ToolCall, len(st.calls.calls))
		for i, c := range st.calls.calls {
			c.Arguments = st.calls.args[i].String()
			done.ToolCalls[i] = c
		}
		if done.FinishReason == "stop" {
			done.FinishReason = "tool_calls"
		}
	}
	return done
}
