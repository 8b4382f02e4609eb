package acp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
)

// currentModel is the model a response's two shapes advertise; they
// must agree.
func currentModel(t *testing.T, what string, m *acpsdk.SessionModelState, opts []acpsdk.SessionConfigOption) string {
	t.Helper()
	if m == nil || len(opts) != 3 || opts[0].Select == nil || opts[0].Select.Id != modelConfigID || opts[1].Select == nil || opts[1].Select.Id != modeConfigID ||
		opts[2].Select == nil || opts[2].Select.Id != effortConfigID {
		t.Fatalf("%s: models %+v, config options %+v", what, m, opts)
	}
	if string(m.CurrentModelId) != string(opts[0].Select.CurrentValue) {
		t.Fatalf("%s: models say %q, the config option %q", what, m.CurrentModelId, opts[0].Select.CurrentValue)
	}
	return string(m.CurrentModelId)
}

// TestSetModelPerSession: session/new advertises the model (models and
// the "model" config option); session/set_model and
// session/set_config_option switch one session's model, not the other's;
// the switch is journaled: a new process loads the session with it.
// Bad input gets -32602.
func TestSetModelPerSession(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	script := writeScript(t, historyScript)
	h := start(t, script, "", nil)
	h.initialize(true, true)
	ctx := testCtx(t)
	first, err := h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := currentModel(t, "session/new", first.Models, first.ConfigOptions); got != "scripted" {
		t.Fatalf("session/new: current model %q, want model.name", got)
	}
	second, err := h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.conn.UnstableSetSessionModel(ctx, acpsdk.UnstableSetSessionModelRequest{SessionId: first.SessionId, ModelId: "big-model"}); err != nil {
		t.Fatal(err)
	}
	set, err := h.conn.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
		SessionId: second.SessionId, ConfigId: modelConfigID, Value: "small-model"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(set.ConfigOptions[0].Select.CurrentValue); got != "small-model" {
		t.Errorf("set_config_option answered %q", got)
	}
	h.client.await(t, "the config_option_update", func(ns []acpsdk.SessionNotification) bool {
		for _, n := range ns {
			if u := n.Update.ConfigOptionUpdate; u != nil && n.SessionId == first.SessionId && string(u.ConfigOptions[0].Select.CurrentValue) == "big-model" {
				return true
			}
		}
		return false
	})
	for _, bad := range []acpsdk.SetSessionConfigOptionRequest{
		{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: first.SessionId, ConfigId: "mode", Value: "x"}},
		{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: first.SessionId, ConfigId: modelConfigID, Value: "two\nlines"}},
		{ValueId: &acpsdk.SetSessionConfigOptionValueId{SessionId: "loom-nope", ConfigId: modelConfigID, Value: "x"}},
	} {
		_, err := h.conn.SetSessionConfigOption(ctx, bad)
		if re, ok := err.(*acpsdk.RequestError); !ok || re.Code != -32602 {
			t.Errorf("set_config_option %+v: %v, want -32602", *bad.ValueId, err)
		}
	}
	h.mustPrompt(first.SessionId, "and now?", acpsdk.StopReasonEndTurn)
	h.mustPrompt(second.SessionId, "and now?", acpsdk.StopReasonEndTurn)
	h.stop()

	again := start(t, script, h.stateDir, nil)
	again.initialize(true, true)
	ctx = testCtx(t)
	for id, want := range map[acpsdk.SessionId]string{first.SessionId: "big-model", second.SessionId: "small-model"} {
		resp, err := again.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: id, Cwd: dir, McpServers: []acpsdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := currentModel(t, "session/load", resp.Models, resp.ConfigOptions); got != want {
			t.Errorf("session/load of %s: model %q, want %q", id, got, want)
		}
	}
}

// TestNewSessionDoesNotWaitForTheModelList: session/new answers while the
// model server has not answered GET /v1/models (it answers only once the
// session exists), with the current model alone; the server's list then
// reaches the client as a config_option_update. A later process opens
// its session with the list it remembered.
func TestNewSessionDoesNotWaitForTheModelList(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"me"},{"id":"other","object":"model","owned_by":"me"}]}`)
	}))
	defer srv.Close()
	tweak := func(c *config.Config) {
		c.Model.Provider, c.Model.BaseURL, c.Model.Name = config.ProviderOpenAI, srv.URL+"/v1", "m"
	}
	h := start(t, "", "", tweak)
	h.initialize(true, true)
	ctx := testCtx(t)
	sess, err := h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := currentModel(t, "session/new", sess.Models, sess.ConfigOptions); got != "m" || len(sess.Models.AvailableModels) != 1 {
		t.Fatalf("session/new: current %q, models %+v; want m alone", got, sess.Models.AvailableModels)
	}
	close(release)
	h.client.await(t, "the config_option_update with the server's list", func(ns []acpsdk.SessionNotification) bool {
		for _, n := range ns {
			if u := n.Update.ConfigOptionUpdate; u != nil && n.SessionId == sess.SessionId {
				if o := u.ConfigOptions[0].Select.Options.Ungrouped; o != nil && len(*o) == 2 {
					return true
				}
			}
		}
		return false
	})
	h.stop()

	again := start(t, "", h.stateDir, tweak)
	again.initialize(true, true)
	next, err := again.conn.NewSession(testCtx(t), acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Models.AvailableModels) != 2 {
		t.Errorf("the next process's session/new offers %+v; want the remembered list of 2", next.Models.AvailableModels)
	}
}
