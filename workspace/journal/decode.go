package journal

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// Resuming a long conversation is mostly decoding its journal (issue 16
// item 5): the records a conversation holds most of, its prompts and its
// coalesced answers, are read here without reflection, in the exact form
// json.Marshal writes them. Anything else — another field order, an
// escaped string, a number out of range — returns ok false and takes the
// general path, so this only ever decodes what json.Unmarshal would decode
// to the same value (TestFastEventDecodingMatchesJSON).

// decodeTextEvent decodes a UserInput ({"Text":"…"}) or an LlmTextDelta
// ({"Request":N,"Text":"…"}) record.
func decodeTextEvent(tag string, raw []byte) (fsm.Event, bool) {
	switch tag {
	case "UserInput":
		rest, ok := bytes.CutPrefix(raw, []byte(`{"Text":`))
		if !ok {
			return nil, false
		}
		text, ok := plainJSONString(rest)
		if !ok {
			return nil, false
		}
		return fsm.UserInput{Text: text}, true
	case "LlmTextDelta":
		rest, ok := bytes.CutPrefix(raw, []byte(`{"Request":`))
		if !ok {
			return nil, false
		}
		num, rest, ok := bytes.Cut(rest, []byte(`,"Text":`))
		if !ok || len(num) == 0 || num[0] == '0' && len(num) > 1 {
			return nil, false
		}
		req, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil {
			return nil, false
		}
		text, ok := plainJSONString(rest)
		if !ok {
			return nil, false
		}
		return fsm.LlmTextDelta{Request: req, Text: text}, true
	}
	return nil, false
}

// plainJSONString reads b, a JSON string followed by the record's closing
// brace and nothing else. A string without escapes is its own bytes when
// they are valid UTF-8 without control characters; one with escapes is
// unquoted by encoding/json.
func plainJSONString(b []byte) (string, bool) {
	if len(b) < 3 || b[0] != '"' || b[len(b)-2] != '"' || b[len(b)-1] != '}' {
		return "", false
	}
	inner := b[1 : len(b)-2]
	escaped := false
	for _, c := range inner {
		if c == '\\' {
			escaped = true
			break
		}
		if c == '"' || c < 0x20 {
			return "", false
		}
	}
	if escaped {
		var s string
		if err := json.Unmarshal(b[:len(b)-1], &s); err != nil {
			return "", false
		}
		return s, true
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}
