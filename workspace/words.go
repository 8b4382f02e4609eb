package workspace

import (
	"fmt"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// The words users read, computed once here for every front end.

// PlanLine is the todo list on one line: "1/3 ✓ read · ▸ fix · ○ test";
// "(cleared)" for none.
func PlanLine(items []fsm.PlanItem) string {
	if len(items) == 0 {
		return "(cleared)"
	}
	done := 0
	parts := make([]string, len(items))
	for i, it := range items {
		mark := "○"
		switch it.Status {
		case fsm.PlanCompleted:
			mark = "✓"
			done++
		case fsm.PlanInProgress:
			mark = "▸"
		}
		step := strings.ReplaceAll(it.Step, "\n", " ")
		if len(step) > 60 {
			step = step[:60] + "…"
		}
		parts[i] = mark + " " + step
	}
	return fmt.Sprintf("%d/%d ", done, len(items)) + strings.Join(parts, " · ")
}
