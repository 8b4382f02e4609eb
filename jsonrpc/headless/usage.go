package headless

import (
	"fmt"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// usageLine is text mode's line about a turn's tokens, "" when the
// server reported none: "· tokens: 1200 in (800 cached), 96 out (40
// reasoning)". The cached and reasoning figures appear only when the
// server reported them.
func (h *Editor) usageLine(u fsm.Usage) string {
	if u.TotalTokens == 0 && u.PromptTokens == 0 && u.CompletionTokens == 0 {
		return ""
	}
	s := fmt.Sprintf("· tokens: %d in", u.PromptTokens)
	if u.CachedTokens != nil {
		s += fmt.Sprintf(" (%d cached)", *u.CachedTokens)
	}
	s += fmt.Sprintf(", %d out", u.CompletionTokens)
	if u.ReasoningTokens != nil {
		s += fmt.Sprintf(" (%d reasoning)", *u.ReasoningTokens)
	}
	if u.Cost != nil {
		s += fmt.Sprintf(", cost %.4f", *u.Cost)
	}
	return h.paint(colorDim, s)
}
