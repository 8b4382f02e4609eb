package acp

import (
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// TestParseRewind: /rewind's words, as TestSlashCommandsRewind cannot
// reach each refusal through a session.
func TestParseRewind(t *testing.T) {
	tests := []struct {
		args    []string
		turn    uint64
		restore fsm.Restore
		problem string
	}{
		{nil, 0, "", "usage: /rewind N [files|conversation|both]"},
		{[]string{"x"}, 0, "", `/rewind: "x" is not a turn number (see /checkpoints)`},
		{[]string{"0"}, 0, "", `/rewind: "0" is not a turn number (see /checkpoints)`},
		{[]string{"-1"}, 0, "", `/rewind: "-1" is not a turn number (see /checkpoints)`},
		{[]string{"3"}, 3, fsm.RestoreBoth, ""},
		{[]string{"3", "files"}, 3, fsm.RestoreFiles, ""},
		{[]string{"3", "conversation", "extra"}, 3, fsm.RestoreConversation, ""},
		{[]string{"3", "both"}, 3, fsm.RestoreBoth, ""},
		{[]string{"3", "all"}, 0, "", `/rewind: restore is files, conversation or both, not "all"`},
	}
	for _, tt := range tests {
		turn, restore, problem := parseRewind(tt.args)
		if turn != tt.turn || restore != tt.restore || problem != tt.problem {
			t.Errorf("parseRewind(%q) = %d, %q, %q; want %d, %q, %q", tt.args, turn, restore, problem, tt.turn, tt.restore, tt.problem)
		}
	}
}

// TestSlashVerbs: the verbs slashCommand answers are the advertised
// ones that are not answered before it (/trust).
func TestSlashVerbs(t *testing.T) {
	for _, c := range slashCommands {
		_, ok := slashVerbs[c.Name]
		if ok == (c.Name == "trust") {
			t.Errorf("/%s: in slashVerbs %v", c.Name, ok)
		}
	}
	if len(slashVerbs) != len(slashCommands)-1 {
		t.Errorf("%d slash verbs for %d advertised commands (one, /trust, answered elsewhere)", len(slashVerbs), len(slashCommands))
	}
	if _, ok := (slashRun{}).slashCommand(t.Context(), "/nothing here"); ok {
		t.Errorf("/nothing was taken for a slash command")
	}
	if _, ok := (slashRun{}).slashCommand(t.Context(), "  / "); ok {
		t.Errorf("a lone / was taken for a slash command")
	}
}
