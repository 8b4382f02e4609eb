package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// planScript: asked to change a.txt, the model keeps a todo list and
// tries an edit, which plan mode refuses (it reads why), then proposes a
// plan. Rejected, it stops; accepted, it reads and edits a.txt in agent
// mode and ticks the list.
const planScript = `
[[step]]
match.last_user_contains = "change a.txt"
  [[step.tool_call]]
  id = "u1"
  name = "update_plan"
  arguments = '{"plan":[{"step":"read a.txt","status":"in_progress"},{"step":"edit it","status":"pending"}]}'
  [[step.tool_call]]
  id = "e0"
  name = "write_file"
  arguments = '{"path":"a.txt","content":"too early\n"}'

[[step]]
match.last_tool_result_contains = "write_file is refused in plan mode"
  [[step.tool_call]]
  id = "p1"
  name = "propose_plan"
  arguments = '{"plan":"1. replace alpha by beta in a.txt"}'

[[step]]
match.last_tool_result_contains = "accepted the plan"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"a.txt"}'

[[step]]
match.last_tool_result_contains = "alpha"
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"a.txt","old_string":"alpha","new_string":"beta"}'

[[step]]
match.last_tool_result_contains = "edited a.txt"
  [[step.tool_call]]
  id = "u2"
  name = "update_plan"
  arguments = '{"plan":[{"step":"read a.txt","status":"completed"},{"step":"edit it","status":"completed"}]}'

[[step]]
match.last_tool_result_contains = "plan updated"
text = ["Done."]
`

// TestPlanModeInACP: session/new offers the modes (and the "mode" config
// option beside "model"); session/set_mode switches to plan
// (current_mode_update); a write is refused; the todo list goes out as
// plan updates; the proposed plan is a permission request whose
// acceptance switches to agent mode, where the edit happens; the title
// and the context meter are sent.
func TestPlanModeInACP(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "alpha\n"})
	h := start(t, writeScript(t, planScript), "", nil)
	h.initialize(true, true)
	ctx := testCtx(t)
	resp, err := h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Modes == nil || resp.Modes.CurrentModeId != "agent" || len(resp.Modes.AvailableModes) != 3 {
		t.Fatalf("session/new modes: %+v", resp.Modes)
	}
	id := resp.SessionId
	if _, err := h.conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: id, ModeId: "yolo"}); err == nil {
		t.Fatal("set_mode yolo succeeded")
	}
	h.client.await(t, "current_mode_update plan", func(ns []acpsdk.SessionNotification) bool {
		return strings.Contains(describe(ns), "  mode plan\n")
	})
	var asked acpsdk.RequestPermissionRequest
	h.client.permit = func(_ context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		asked = req
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: optionPlanAccept}}}, nil
	}
	h.mustPrompt(id, "change a.txt to say beta", acpsdk.StopReasonEndTurn)
	if asked.ToolCall.ToolCallId != "p1" || len(asked.ToolCall.Content) != 1 || !strings.Contains(asked.ToolCall.Content[0].Content.Content.Text.Text, "replace alpha by beta") {
		t.Fatalf("the plan's permission request: %+v", asked)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "beta\n" {
		t.Fatalf("a.txt = %q", b)
	}
	got := describe(h.client.snapshot())
	for _, want := range []string{
		"  title \"change a.txt to say beta\"\n",
		"  plan in_progress:read a.txt; pending:edit it\n",
		"  tool_call_update e0 failed\n",
		"  mode agent\n",
		"  plan completed:read a.txt; completed:edit it\n",
		"  usage ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in the updates:\n%s", want, got)
		}
	}
	// The mode is a config option too.
	set, err := h.conn.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
		SessionId: id, ConfigId: modeConfigID, Value: "ask"}})
	if err != nil || len(set.ConfigOptions) != 3 || set.ConfigOptions[1].Select.CurrentValue != "ask" {
		t.Fatalf("set_config_option mode: %+v, %v", set, err)
	}
	// And the reasoning effort (category thought_level), kept by the conversation.
	set, err = h.conn.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
		SessionId: id, ConfigId: effortConfigID, Value: "high"}})
	if err != nil || len(set.ConfigOptions) != 3 || set.ConfigOptions[2].Select.CurrentValue != "high" ||
		*set.ConfigOptions[2].Select.Category != acpsdk.SessionConfigOptionCategoryThoughtLevel {
		t.Fatalf("set_config_option effort: %+v, %v", set, err)
	}
	if _, err := h.conn.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
		SessionId: id, ConfigId: effortConfigID, Value: "turbo"}}); err == nil || !strings.Contains(err.Error(), "unknown reasoning effort") {
		t.Fatalf("set_config_option effort turbo: %v, want refused", err)
	}
	set, err = h.conn.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
		SessionId: id, ConfigId: effortConfigID, Value: effortDefault}})
	if err != nil || set.ConfigOptions[2].Select.CurrentValue != effortDefault {
		t.Fatalf("set_config_option effort default: %+v, %v", set, err)
	}
}

// TestPlanRejectedInACP: "keep planning" ends the turn with the plan
// untouched and the mode still plan; the next prompt is the comment.
func TestPlanRejectedInACP(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "alpha\n"})
	h := start(t, writeScript(t, planScript), "", nil)
	h.initialize(true, true)
	id := h.newSession(dir)
	ctx := testCtx(t)
	if _, err := h.conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	h.client.permit = func(_ context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: optionPlanReject}}}, nil
	}
	h.mustPrompt(id, "change a.txt to say beta", acpsdk.StopReasonEndTurn)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "alpha\n" {
		t.Fatalf("a.txt = %q", b)
	}
	if got := describe(h.client.snapshot()); strings.Contains(got, "  mode agent\n") || !strings.Contains(got, "  tool_call_update p1 failed\n") {
		t.Fatalf("updates after a rejected plan:\n%s", got)
	}
}
