package llmtest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestStreamWire: a reply streams as Chat Completions chunks, byte for
// byte: role, reasoning, text, one chunk per call, the finish reason,
// the usage, [DONE].
func TestStreamWire(t *testing.T) {
	replies := map[string]Reply{
		"everything": {
			Reasoning: []string{"think"}, ReasoningField: "reasoning", Text: []string{"a", "b"},
			ToolCalls: []ToolCall{Call("c1", "read_file", `{"path":"x"}`)},
			Usage:     &Usage{Prompt: 3, Completion: 4, Cached: Int(1), Reasoning: Int(2)},
		},
		"plain": {Reasoning: []string{"r"}, Text: []string{"hi"}, Usage: &Usage{Prompt: 1, Completion: 1}},
	}
	want := map[string]string{
		"everything": "data: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},\"finish_reason\":null}],\"usage\":null}\n\ndata: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"think\"},\"finish_reason\":null}],\"usage\":null}\n\ndata: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}],\"usage\":null}\n\ndata: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":null}],\"usage\":null}\n\ndata: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"x\\\"}\"}}]},\"finish_reason\":null}],\"usage\":null}\n\ndata: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n\ndata: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"total_tokens\":7,\"prompt_tokens_details\":{\"cached_tokens\":1},\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\ndata: [DONE]\n\n",
		"plain":      "data: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},\"finish_reason\":null}],\"usage\":null}\n\ndata: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"r\"},\"finish_reason\":null}],\"usage\":null}\n\ndata: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}],\"usage\":null}\n\ndata: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\ndata: {\"id\":\"chatcmpl-llmtest\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"llmtest\",\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}\n\ndata: [DONE]\n\n",
	}
	for name, reply := range replies {
		srv := NewServer(t, func(Request) Reply { return reply })
		resp, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"go"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want[name] {
			t.Errorf("%s streamed:\n%q\nwant\n%q", name, b, want[name])
		}
	}
}
