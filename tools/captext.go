package tools

// CapText caps a tool's text result at the Env's MaxOutputBytes as bash
// does: the head and the tail are kept, with a note of what was cut.
// Tools defined outside this package (MCP servers' tools) use it.
func (e *Env) CapText(s string) string {
	w := newHeadTail(e.maxOutput())
	w.Write([]byte(s))
	return w.String()
}
