package jsonrpc

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// lspPlanScript plans in plan mode: a todo list and a write (refused),
// then a plan; rejected with a comment it proposes a smaller one;
// accepted, it writes b.txt in agent mode.
const lspPlanScript = `
[[step]]
match.last_user_contains = "add b.txt"
  [[step.tool_call]]
  id = "u1"
  name = "update_plan"
  arguments = '{"plan":[{"step":"write b.txt","status":"pending"}]}'
  [[step.tool_call]]
  id = "w0"
  name = "write_file"
  arguments = '{"path":"b.txt","content":"early\n"}'

[[step]]
match.last_tool_result_contains = "write_file is refused in plan mode"
  [[step.tool_call]]
  id = "p1"
  name = "propose_plan"
  arguments = '{"plan":"1. write b.txt with three lines"}'

[[step]]
match.last_tool_result_contains = "one line only"
  [[step.tool_call]]
  id = "p2"
  name = "propose_plan"
  arguments = '{"plan":"1. write b.txt with one line"}'

[[step]]
match.last_tool_result_contains = "accepted the plan"
  [[step.tool_call]]
  id = "w1"
  name = "write_file"
  arguments = '{"path":"b.txt","content":"one\n"}'

[[step]]
match.last_role = "tool"
text = ["Done."]
`

func planProposed(plan string) func([]fakeeditor.Message) bool {
	return func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			var p PlanProposalParams
			if m.Method == MethodPlanProposal && m.Decode(&p) == nil && p.Plan == plan {
				return true
			}
		}
		return false
	}
}

// TestPlanModeOverLSP: loom.setMode plan; a write is refused; the todo
// list (loom/plan) and the plan (loom/planProposal) are sent;
// loom.decidePlan rejects with a comment, then accepts: agent mode
// (loom/mode), and the write happens.
func TestPlanModeOverLSP(t *testing.T) {
	e := newEnv(t, envOptions{cfg: loomClient, script: lspPlanScript})
	var res ModeResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdSetMode, ModeArgs{Mode: "plan"}, &res); err != nil || res.Mode != "plan" {
		t.Fatalf("setMode: %+v, %v", res, err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdSetMode, ModeArgs{Mode: "yolo"}, nil); err == nil {
		t.Fatal("setMode yolo succeeded")
	}
	e.ask("add b.txt")
	e.await("the first plan", planProposed("1. write b.txt with three lines"))
	if _, err := os.Stat(filepath.Join(e.folder, "b.txt")); err == nil {
		t.Fatal("b.txt was written in plan mode")
	}
	// A client that reconnects finds the plan in loom.status.
	var waiting workspace.Status
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &waiting); err != nil || waiting.PlanProposal == nil ||
		!strings.Contains(waiting.PlanProposal.Plan, "1. write b.txt with three lines") || waiting.PlanProposal.CallID == "" {
		t.Fatalf("loom.status while the plan waits: %+v, %v", waiting.PlanProposal, err)
	}
	reject := DecidePlanArgs{PlanDecision: workspace.PlanDecision{Comment: "one line only"}}
	if err := e.ed.ExecuteCommand(e.ctx, CmdDecidePlan, reject, nil); err != nil {
		t.Fatal(err)
	}
	e.await("the second plan", planProposed("1. write b.txt with one line"))
	if err := e.ed.ExecuteCommand(e.ctx, CmdDecidePlan, DecidePlanArgs{PlanDecision: workspace.PlanDecision{Accept: true}}, nil); err != nil {
		t.Fatal(err)
	}
	e.await("the turn's end", turnEnded(e.folder, 0))
	if b, err := os.ReadFile(filepath.Join(e.folder, "b.txt")); err != nil || string(b) != "one\n" {
		t.Fatalf("b.txt = %q, %v", b, err)
	}
	e.await("agent mode", hasMethod(MethodMode, `"mode":"agent"`))
	e.await("the todo list", hasMethod(MethodPlan, `"step":"write b.txt"`))
	if err := e.ed.ExecuteCommand(e.ctx, CmdDecidePlan, DecidePlanArgs{PlanDecision: workspace.PlanDecision{Accept: true}}, nil); err == nil || !strings.Contains(err.Error(), "no plan") {
		t.Fatalf("decidePlan with no plan: %v", err)
	}
	var st struct {
		Mode string `json:"mode"`
		Plan []struct {
			Step string `json:"step"`
		} `json:"plan"`
		PlanProposal any `json:"planProposal"`
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil || st.Mode != "agent" || len(st.Plan) != 1 || st.PlanProposal != nil {
		t.Fatalf("loom.status mode %q plan %v (%v)", st.Mode, st.Plan, err)
	}
}

// loom.ask {images}: a picture for a model that takes them runs the turn;
// for one that does not, or a file that is no picture, loom.ask answers
// InvalidParams saying why.
func TestAskWithImageOverLSP(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "model.toml")
	os.WriteFile(script, []byte("[[step]]\nmatch.last_user_contains = \"what is it\"\nrepeat = true\ntext = [\"A pixel.\"]\n"), 0o644)
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	pixel := filepath.Join(dir, "pixel.png")
	os.WriteFile(pixel, png, 0o644)
	notPicture := filepath.Join(dir, "notes.txt")
	os.WriteFile(notPicture, []byte("plain text\n"), 0o644)
	for _, images := range []string{"auto", "on"} {
		cfg := loomClient
		cfg.Folders = []string{t.TempDir()}
		e := newEnv(t, envOptions{cfg: cfg,
			options: map[string]any{"model": map[string]any{"provider": "script", "script": script, "images": images}}})
		var res AskResult
		err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "what is it?", Images: []string{pixel}}, &res)
		if images == "auto" {
			if err == nil || !strings.Contains(err.Error(), "not known to take pictures") {
				t.Fatalf("images auto, model scripted: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		e.await("the answer", turnEnded(e.folder, 0))
		if err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "what is it?", Images: []string{notPicture}}, nil); err == nil || !strings.Contains(err.Error(), "not a PNG, JPEG, GIF or WebP") {
			t.Fatalf("a text file as a picture: %v", err)
		}
	}
}
