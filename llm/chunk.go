package llm

import (
	"encoding/json"
	"strconv"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// wireChunk is the part of a chat.completion.chunk the provider reads.
// Its own small struct, rather than openai.ChatCompletionChunk, because
// it must tell a missing tool-call index from index 0, must see an
// "error" member, and should cost few allocations per chunk.
type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
	// Object is "error" in vLLM's stream errors, which are its
	// ErrorResponse itself: {"object":"error","message",…}.
	Object string `json:"object"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

type wireDelta struct {
	Content   string         `json:"content"`
	ToolCalls []wireToolCall `json:"tool_calls"`
	// ReasoningContent is the reasoning as vLLM, llama.cpp and DeepSeek
	// stream it; Reasoning as OpenRouter and Ollama do (newer vLLM sends
	// both, with the same text).
	ReasoningContent lenientText `json:"reasoning_content"`
	Reasoning        lenientText `json:"reasoning"`
	// ReasoningDetails is OpenRouter's structured reasoning (see
	// detailsAcc).
	ReasoningDetails []json.RawMessage `json:"reasoning_details"`
}

// reasoning returns the delta's reasoning text, from whichever field the
// server uses, counting it once when it uses both.
func (d *wireDelta) reasoning() string {
	if d.ReasoningContent != "" {
		return string(d.ReasoningContent)
	}
	return string(d.Reasoning)
}

// lenientText is a string field that some servers may fill with another
// JSON type: anything but a string reads as "", so that an unexpected
// shape of an optional field never fails the whole response.
type lenientText string

// UnmarshalJSON implements json.Unmarshaler.
func (t *lenientText) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = lenientText(s)
	}
	return nil
}

type wireToolCall struct {
	// Index is nil when the server omits it (older Ollama).
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	// ExtraContent carries Gemini's thought signature of the call.
	ExtraContent *struct {
		Google struct {
			ThoughtSignature string `json:"thought_signature"`
		} `json:"google"`
	} `json:"extra_content"`
}

type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's name for the cached prompt
	// tokens.
	PromptCacheHitTokens *int64 `json:"prompt_cache_hit_tokens"`
	// Cost is OpenRouter's: what the request cost, in credits.
	Cost *float64 `json:"cost"`
}

// usage converts the wire usage. Cached and reasoning tokens stay nil
// unless the server reported them.
func (u *wireUsage) usage() fsm.Usage {
	out := fsm.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	switch {
	case u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens != nil:
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	case u.PromptCacheHitTokens != nil:
		out.CachedTokens = u.PromptCacheHitTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	out.Cost = u.Cost
	return out
}

// toolAccumulator assembles streamed tool-call fragments into complete
// calls, in the order the model started them. A fragment belongs to the
// call with the same index; without an index, to the call with the same
// id; with neither, to the call in progress — unless it names a function
// while the call in progress already has a name, which starts a new call.
type toolAccumulator struct {
	calls   []fsm.ToolCall
	args    [][]byte // args[i] accumulates the arguments of calls[i]
	byIndex map[int]int
	byID    map[string]int
}

// add merges one fragment and returns the position of its call.
func (a *toolAccumulator) add(d *wireToolCall) int {
	pos, ok := a.continued(d)
	if !ok {
		pos = a.open(d)
	}
	c := &a.calls[pos]
	if d.ID != "" && c.ID == "" {
		c.ID = d.ID
		if a.byID == nil {
			a.byID = make(map[string]int)
		}
		a.byID[d.ID] = pos
	}
	if d.Function.Name != "" && c.Name == "" {
		c.Name = d.Function.Name
	}
	if d.ExtraContent != nil && d.ExtraContent.Google.ThoughtSignature != "" {
		c.Signature = d.ExtraContent.Google.ThoughtSignature
	}
	a.args[pos] = append(a.args[pos], d.Function.Arguments...)
	return pos
}

// continued finds the call a fragment continues: by its index when it
// has one, else by its id, else the last call unless both name a
// function (a server that sends neither index nor id).
func (a *toolAccumulator) continued(d *wireToolCall) (pos int, ok bool) {
	switch {
	case d.Index != nil:
		pos, ok = a.byIndex[*d.Index]
	case d.ID != "":
		pos, ok = a.byID[d.ID]
	case len(a.calls) > 0:
		last := len(a.calls) - 1
		if d.Function.Name == "" || a.calls[last].Name == "" {
			return last, true
		}
	}
	return pos, ok
}

// open starts a new call for a fragment, known by its index from now on.
func (a *toolAccumulator) open(d *wireToolCall) int {
	pos := len(a.calls)
	a.calls = append(a.calls, fsm.ToolCall{})
	a.args = append(a.args, nil)
	if d.Index != nil {
		if a.byIndex == nil {
			a.byIndex = make(map[int]int)
		}
		a.byIndex[*d.Index] = pos
	}
	return pos
}

// result returns the complete calls. A call the server sent without an
// id gets a synthetic one, unique within the request, so that its tool
// result can be paired with it.
func (a *toolAccumulator) result(reqID uint64) []fsm.ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	out := make([]fsm.ToolCall, len(a.calls))
	for i, c := range a.calls {
		c.Arguments = string(a.args[i])
		if c.ID == "" {
			c.ID = "call_" + strconv.FormatUint(reqID, 10) + "_" + strconv.Itoa(i)
		}
		out[i] = c
	}
	return out
}

// unmarshal decodes one chunk's JSON into c, which must be zero.
func (c *wireChunk) unmarshal(data []byte) error {
	return json.Unmarshal(data, c)
}
