package headless

import "strings"

// Text mode shows the model's reasoning, when Options.ShowReasoning is
// set, on Log (stderr), dimmed and under a "thinking" line, so that Out
// (stdout) holds the answer alone and a script piping it never reads
// reasoning. JSONL writes it as reasoning_delta events.

// showReasoning writes a piece of reasoning in text mode.
func (h *Editor) showReasoning(text string) {
	if !h.opts.ShowReasoning || text == "" {
		return
	}
	if !h.text.reasoning {
		h.endLine()
		h.write(h.opts.Log, h.paint(colorDim, "· thinking")+"\n")
		h.text.reasoning, h.text.reasoningAtLineEnd = true, true
	}
	h.write(h.opts.Log, h.paint(colorDim, text))
	h.text.reasoningAtLineEnd = strings.HasSuffix(text, "\n")
}

// endReasoning ends the reasoning being shown, if any, so that what comes
// next starts on a line of its own.
func (h *Editor) endReasoning() {
	if !h.text.reasoning {
		return
	}
	h.text.reasoning = false
	if !h.text.reasoningAtLineEnd {
		h.write(h.opts.Log, "\n")
	}
}

// endReasoningLine ends the reasoning's line, if it is open, so that the
// progress line, which rewrites its own line, does not erase it.
func (h *Editor) endReasoningLine() {
	if h.text.reasoning && !h.text.reasoningAtLineEnd {
		h.text.reasoningAtLineEnd = true
		h.write(h.opts.Log, "\n")
	}
}
