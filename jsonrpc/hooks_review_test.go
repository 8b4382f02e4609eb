package jsonrpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// reviewHookEnv is reviewEnv (with model script) with a trusted
// PostToolUse hook on the tools matcher selects that logs the input it is
// given (one JSON line a run) to the returned file, outside the folder,
// and adds context the model reads.
func reviewHookEnv(t *testing.T, script, matcher string) (e *env, path, log string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	log = filepath.Join(t.TempDir(), "post.log")
	settings := `{"hooks": {"PostToolUse": [{"matcher": "` + matcher + `", "hooks": [{"type": "command", "command": "(cat; echo) >> ` + log + `; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"post hook saw it\"}}'"}]}]}}`
	cfg := fakeeditor.Config{Loom: true, ApplyEdit: true, Review: true}
	cfg.Folders = []string{gittest.Repo(t, map[string]string{"r.txt": reviewBase, ".claude/settings.json": settings})}
	e = newEnv(t, envOptions{script: script, cfg: cfg,
		options: map[string]any{"tools": map[string]any{"bash": "allow", "edits": "review"}}})
	var res TrustResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdTrust, FolderArgs{}, &res); err != nil {
		t.Fatalf("loom.trust: %v", err)
	}
	e.statusUntil("the hook runs after loom.trust", func(st workspace.Status) bool { return len(st.Hooks) == 1 && st.Hooks[0].Held == "" })
	return e, filepath.Join(e.folder, "r.txt"), log
}

// decideOne asks prompt, waits for its proposal, checks that the hook
// (logging to log) did not run before the decision, decides the proposal
// with the loom.review arguments decision gives, and waits for the
// turn's end.
func decideOne(t *testing.T, e *env, log, prompt string, decision func(ProposedChangesParams) map[string]any) {
	t.Helper()
	from := len(e.ed.Messages(""))
	e.ask(prompt)
	p := awaitProposal(e)
	if b, _ := os.ReadFile(log); len(b) != 0 {
		t.Fatalf("the hook ran before the decision: %s", b)
	}
	args := decision(p)
	args["id"] = p.ID
	var res workspace.ReviewResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, args, &res); err != nil {
		t.Fatalf("loom.review: %v", err)
	}
	e.await("turn ended", turnEnded(e.folder, from))
}

func rejectAll(ProposedChangesParams) map[string]any { return map[string]any{"reject": "all"} }

// postHookNotes are the loom/hook notifications of PostToolUse hooks.
func postHookNotes(t *testing.T, e *env) []HookParams {
	var out []HookParams
	for _, m := range e.ed.Messages(MethodHook) {
		var p HookParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Hook.Event == "PostToolUse" {
			out = append(out, p)
		}
	}
	return out
}

// TestReviewedEditRunsPostToolUseWhenApplied: under tools.edits =
// "review" a PostToolUse hook runs when the edit is applied, not when it
// is proposed, with the input as accepted: accepted in part, the hook
// reads the text that was written (not the model's, half rejected), and
// the model reads what the hook added. A rejected edit ran nothing: its
// PostToolUse hooks do not run (the formats run them after a tool ran).
//
// A command ran whatever is decided of its changes: its PostToolUse hook
// runs at the decision, with its output and the decision.
func TestReviewedEditRunsPostToolUseWhenApplied(t *testing.T) {
	t.Run("accepted in part", func(t *testing.T) {
		e, path, log := reviewHookEnv(t, reviewScript, "Edit|Write")
		decideOne(t, e, log, "change b and i", func(p ProposedChangesParams) map[string]any {
			return map[string]any{"accept": []string{p.Changes[0].Hunks[1].ID}}
		})
		want := "a\nb\nc\nd\ne\nf\ng\nh\nI agent\nj\n"
		if b, _ := os.ReadFile(path); string(b) != want {
			t.Fatalf("disk %q", b)
		}
		lines := strings.Split(strings.TrimSpace(readFile(t, log)), "\n")
		if len(lines) != 1 {
			t.Fatalf("the hook ran %d times: %q", len(lines), lines)
		}
		var in struct {
			ToolName  string            `json:"tool_name"`
			ToolInput map[string]string `json:"tool_input"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &in); err != nil {
			t.Fatal(err)
		}
		if in.ToolName != "Write" || in.ToolInput["content"] != want || in.ToolInput["file_path"] != path {
			t.Errorf("the hook's input: %s", lines[0])
		}
		if n := postHookNotes(t, e); len(n) != 1 || n[0].Hook.Context != "post hook saw it" {
			t.Errorf("loom/hook PostToolUse: %+v", n)
		}
		calls := toolCalls(t, e.ed.Messages(MethodToolCall), "write_file")
		if last := calls[len(calls)-1]; last.Status != "succeeded" {
			t.Errorf("write_file ended %+v", last)
		}
	})
	t.Run("command", func(t *testing.T) {
		e, _, log := reviewHookEnv(t, commandScript, "Bash")
		decideOne(t, e, log, "run it", rejectAll)
		got := readFile(t, log)
		if strings.Count(got, "\n") != 1 || !strings.Contains(got, `"tool_name":"Bash"`) || !strings.Contains(got, "the user discarded this command's changes") {
			t.Errorf("the hook's input: %s", got)
		}
		if n := postHookNotes(t, e); len(n) != 1 {
			t.Errorf("loom/hook PostToolUse: %+v", n)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		e, path, log := reviewHookEnv(t, reviewScript, "Edit|Write")
		decideOne(t, e, log, "change b and i", rejectAll)
		if b, _ := os.ReadFile(path); string(b) != reviewBase {
			t.Fatalf("disk %q after a rejection", b)
		}
		if b, _ := os.ReadFile(log); len(b) != 0 {
			t.Errorf("the hook ran for a rejected edit: %s", b)
		}
		if n := postHookNotes(t, e); len(n) != 0 {
			t.Errorf("loom/hook PostToolUse for a rejected edit: %+v", n)
		}
	})
}
