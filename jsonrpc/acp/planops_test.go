package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// lineRewriter passes r on line by line through fn.
func lineRewriter(r io.Reader, fn func([]byte) []byte) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if _, werr := pw.Write(fn(line)); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// withPlanCapability adds clientCapabilities.plan = {} to the client's
// initialize request (the SDK's client, v0.13.0, cannot say it).
func withPlanCapability(r io.Reader) io.Reader {
	return lineRewriter(r, func(line []byte) []byte {
		if !bytes.Contains(line, []byte(`"method":"initialize"`)) {
			return line
		}
		return bytes.Replace(line, []byte(`"clientCapabilities":{`), []byte(`"clientCapabilities":{"plan":{},`), 1)
	})
}

// planEvents are the plan operations in the raw updates, as
// "update <type> <planId> <what>" and "removed <planId>".
func planEvents(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		var msg struct {
			Params struct {
				Update struct {
					SessionUpdate string `json:"sessionUpdate"`
					PlanID        string `json:"planId"`
					Plan          *struct {
						Type    string             `json:"type"`
						PlanID  string             `json:"planId"`
						Content string             `json:"content"`
						Entries []acpsdk.PlanEntry `json:"entries"`
					} `json:"plan"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil {
			t.Fatalf("a plan update that is not JSON: %s", l)
		}
		u := msg.Params.Update
		switch u.SessionUpdate {
		case "plan_removed":
			out = append(out, "removed "+u.PlanID)
		case "plan_update":
			what := u.Plan.Content
			if u.Plan.Type == "items" {
				var items []string
				for _, e := range u.Plan.Entries {
					items = append(items, string(e.Status)+":"+e.Content)
				}
				what = strings.Join(items, "; ")
			}
			out = append(out, "update "+u.Plan.Type+" "+u.Plan.PlanID+" "+what)
		}
	}
	return out
}

// TestPlanOperations: a client that declares clientCapabilities.plan
// gets the todo list as a checklist plan (plan_update "items", planId
// "todo") replaced as it changes, and the plan proposed in plan mode as
// a Markdown plan (planId "plan-p1") that is removed when the turn that
// builds it ends, or at once when rejected; never the legacy plan
// update. Without the capability: the legacy plan update, no plan
// operation (TestPlanModeInACP).
func TestPlanOperations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		option string
		want   []string
	}{
		{"accepted", optionPlanAccept, []string{
			"update items todo in_progress:read a.txt; pending:edit it",
			"update markdown plan-p1 1. replace alpha by beta in a.txt",
			"update items todo completed:read a.txt; completed:edit it",
			"removed plan-p1",
		}},
		{"rejected", optionPlanReject, []string{
			"update items todo in_progress:read a.txt; pending:edit it",
			"update markdown plan-p1 1. replace alpha by beta in a.txt",
			"removed plan-p1",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": "alpha\n"})
			h := startWithInput(t, "", agentConfig(writeScript(t, planScript), nil), withPlanCapability)
			h.initialize(true, true)
			id := h.newSession(dir)
			if _, err := h.conn.SetSessionMode(testCtx(t), acpsdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"}); err != nil {
				t.Fatal(err)
			}
			h.client.permit = func(_ context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
				return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: acpsdk.PermissionOptionId(tc.option)}}}, nil
			}
			h.mustPrompt(id, "change a.txt to say beta", acpsdk.StopReasonEndTurn)
			h.client.mu.Lock()
			got := planEvents(t, h.client.rawUpdates)
			legacy := strings.Contains(describe(h.client.wire), "  plan ")
			h.client.mu.Unlock()
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("plan operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if legacy {
				t.Errorf("a legacy plan update to a client that declared plan operations")
			}
		})
	}
}
