package llm

import (
	"bytes"
	"encoding/json"
)

// OpenRouter streams a reasoning model's reasoning as
// delta.reasoning_details too: a list of details (reasoning.text with a
// signature, reasoning.encrypted with data, reasoning.summary), each
// streamed in pieces that share an index. It requires them back, unchanged,
// with the assistant message that made tool calls (Gemini 3 refuses the
// next request otherwise). detailsAcc rebuilds them: pieces of the same
// index and type are one detail, their text, summary and data joined,
// their other members as last sent, in the order the server sent them.

// opaqueOpenRouter names OpenRouter's opaque data: the reasoning_details
// array, as rebuilt from the stream.
const opaqueOpenRouter = "openrouter"

// detail is one reasoning detail: its members in the order first seen.
type detail struct {
	keys []string
	vals map[string]json.RawMessage
}

type detailsAcc struct {
	list []*detail
}

// add merges the details of one delta.
func (a *detailsAcc) add(raw []json.RawMessage) {
	for _, r := range raw {
		d, err := decodeDetail(r)
		if err != nil {
			continue
		}
		if prev := a.same(d); prev != nil {
			prev.merge(d)
		} else {
			a.list = append(a.list, d)
		}
	}
}

// same returns the detail d continues: the last one of its type and
// index, when d has an index.
func (a *detailsAcc) same(d *detail) *detail {
	idx, ok := d.vals["index"]
	if !ok {
		return nil
	}
	for i := len(a.list) - 1; i >= 0; i-- {
		p := a.list[i]
		if bytes.Equal(p.vals["index"], idx) && bytes.Equal(p.vals["type"], d.vals["type"]) {
			return p
		}
	}
	return nil
}

func decodeDetail(raw json.RawMessage) (*detail, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	d := &detail{vals: map[string]json.RawMessage{}}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, seen := d.vals[k]; !seen {
			d.keys = append(d.keys, k)
		}
		d.vals[k] = v
	}
	return d, nil
}

// merge takes the members of the next piece of the same detail.
func (d *detail) merge(n *detail) {
	for _, k := range n.keys {
		v := n.vals[k]
		old, seen := d.vals[k]
		if !seen {
			d.keys = append(d.keys, k)
			d.vals[k] = v
			continue
		}
		switch k {
		case "text", "summary", "data":
			var a, b string
			if json.Unmarshal(old, &a) == nil && json.Unmarshal(v, &b) == nil {
				joined, _ := marshalNoEscape(a + b)
				d.vals[k] = joined
				continue
			}
		}
		if string(v) != "null" {
			d.vals[k] = v
		}
	}
}

// data returns the details as a JSON array, "" when there are none.
func (a *detailsAcc) data() string {
	if len(a.list) == 0 {
		return ""
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, d := range a.list {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, k := range d.keys {
			if j > 0 {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(k)
			b.Write(key)
			b.WriteByte(':')
			b.Write(d.vals[k])
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}
