package journal

import (
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// TestFastEventDecodingMatchesJSON checks the journal's fast path for
// prompts and answers against encoding/json: on what json.Marshal writes
// it must decode the same value, and on anything it does not take it must
// step aside (ok false), never decode something else.
func TestFastEventDecodingMatchesJSON(t *testing.T) {
	check := func(t interface {
		Fatalf(string, ...any)
	}, tag string, raw []byte, want fsm.Event) {
		got, ok := decodeTextEvent(tag, raw)
		if !ok {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %s: fast path decoded %#v, encoding/json %#v", tag, raw, got, want)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		text := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-z "\\<>&\n\t]{0,30}`),
			rapid.Custom(func(rt *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(rt, "bytes")) })).Draw(rt, "text")
		req := rapid.Uint64().Draw(rt, "request")
		for _, ev := range []fsm.Event{fsm.UserInput{Text: text}, fsm.LlmTextDelta{Request: req, Text: text}} {
			raw, err := json.Marshal(ev)
			if err != nil {
				rt.Fatal(err)
			}
			tag := Tag(ev)
			want, err := decodeAs[fsm.UserInput](raw)
			if tag == "LlmTextDelta" {
				want, err = decodeAs[fsm.LlmTextDelta](raw)
			}
			if err != nil {
				rt.Fatal(err)
			}
			got, ok := decodeTextEvent(tag, raw)
			if !ok {
				rt.Fatalf("%s: the fast path refused what json.Marshal wrote: %s", tag, raw)
			}
			if !reflect.DeepEqual(got, want) {
				rt.Fatalf("%s %s: fast path decoded %#v, encoding/json %#v", tag, raw, got, want)
			}
		}
	})
	// Records json.Marshal never writes: the fast path must refuse them
	// or agree with encoding/json.
	for _, c := range []struct{ tag, raw string }{
		{"UserInput", `{"Text":"a"} `},
		{"UserInput", `{"Text":"a"b"}`},
		{"UserInput", `{"Text":"a\"}`},
		{"UserInput", `{"Text":"tab	in"}`},
		{"UserInput", "{\"Text\":\"\xff\"}"},
		{"UserInput", `{"Text":"\ud83d\ude00"}`},
		{"UserInput", `{"Text":"\u00e9\/"}`},
		{"UserInput", `{"Text":null}`},
		{"UserInput", `{"Text":"x","Extra":1}`},
		{"LlmTextDelta", `{"Request":007,"Text":"x"}`},
		{"LlmTextDelta", `{"Request":-1,"Text":"x"}`},
		{"LlmTextDelta", `{"Request":18446744073709551616,"Text":"x"}`},
		{"LlmTextDelta", `{"Request":1.5,"Text":"x"}`},
		{"LlmTextDelta", `{"Request":+1,"Text":"x"}`},
		{"LlmTextDelta", `{"Text":"x","Request":1}`},
		{"LlmTextDelta", `{"Request":12,"Text":"a\nb"}`},
	} {
		var want fsm.Event
		var err error
		if c.tag == "UserInput" {
			want, err = decodeAs[fsm.UserInput](json.RawMessage(c.raw))
		} else {
			want, err = decodeAs[fsm.LlmTextDelta](json.RawMessage(c.raw))
		}
		if err != nil {
			if _, ok := decodeTextEvent(c.tag, []byte(c.raw)); ok {
				t.Fatalf("%s: fast path accepted what encoding/json refuses: %v", c.raw, err)
			}
			continue
		}
		check(t, c.tag, []byte(c.raw), want)
	}
}

// TestTagsRoundTrip: every journaled event type has the tag of its own
// name, decodes back from it, and the events left out have none.
func TestTagsRoundTrip(t *testing.T) {
	for tag, decode := range decoders {
		ev, err := decode(nil)
		if err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		if got := Tag(ev); got != tag {
			t.Errorf("Tag(%T) = %q, want %q", ev, got, tag)
		}
		if name := reflect.TypeOf(ev).Name(); name != tag {
			t.Errorf("tag %q decodes a %s", tag, name)
		}
	}
	for _, ev := range []fsm.Event{fsm.ShutdownRequested{}, fsm.LlmReasoningDelta{}, nil} {
		if got := Tag(ev); got != "" {
			t.Errorf("Tag(%T) = %q, want none", ev, got)
		}
	}
	if _, err := DecodeEvent("NoSuchEvent", nil); err == nil {
		t.Error("an unknown tag decoded")
	}
}
