package llm

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// TestToolAccumulator feeds tool-call fragments, as JSON tool_calls
// arrays, and checks the assembled calls.
func TestToolAccumulator(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []fsm.ToolCall
	}{
		{"interleaved by index", []string{
			`[{"index":0,"id":"a","function":{"name":"read_file","arguments":"{\"pa"}},{"index":1,"id":"b","function":{"name":"grep","arguments":"{\"pat"}}]`,
			`[{"index":0,"function":{"arguments":"th\":\"x\"}"}}]`,
			`[{"index":1,"function":{"arguments":"tern\":\"y\"}"}}]`,
		}, []fsm.ToolCall{{ID: "a", Name: "read_file", Arguments: `{"path":"x"}`}, {ID: "b", Name: "grep", Arguments: `{"pattern":"y"}`}}},
		{"interleaved by id, no index", []string{
			`[{"id":"a","function":{"name":"read_file","arguments":"{\"pa"}}]`,
			`[{"id":"b","function":{"name":"grep","arguments":"{\"pat"}}]`,
			`[{"id":"a","function":{"arguments":"th\":\"x\"}"}}]`,
			`[{"id":"b","function":{"arguments":"tern\":\"y\"}"}}]`,
		}, []fsm.ToolCall{{ID: "a", Name: "read_file", Arguments: `{"path":"x"}`}, {ID: "b", Name: "grep", Arguments: `{"pattern":"y"}`}}},
		{"index 0 is not a missing index", []string{
			`[{"index":0,"id":"a","function":{"name":"f","arguments":""}}]`,
			`[{"index":0,"function":{"arguments":"{}"}}]`,
		}, []fsm.ToolCall{{ID: "a", Name: "f", Arguments: `{}`}}},
		{"no index, no id: continuation, then a new named call", []string{
			`[{"function":{"name":"f","arguments":"{\"a\":"}}]`,
			`[{"function":{"arguments":"1}"}}]`,
			`[{"function":{"name":"g","arguments":""}}]`,
		}, []fsm.ToolCall{{ID: "call_7_0", Name: "f", Arguments: `{"a":1}`}, {ID: "call_7_1", Name: "g", Arguments: ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var acc toolAccumulator
			for _, c := range tt.chunks {
				var calls []wireToolCall
				if err := json.Unmarshal([]byte(c), &calls); err != nil {
					t.Fatal(err)
				}
				for i := range calls {
					acc.add(&calls[i])
				}
			}
			if got := acc.result(7); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
