package acp

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// readEditScript reads notes.txt and, when the model saw the client's
// unsaved text, edits it; a model that saw the disk gets no answer (the
// script has no step for it) and the turn fails.
const readEditScript = `
[[step]]
match.last_user_contains = "tidy notes"
text = ["Let me ", "look at the notes."]
  [[step.tool_call]]
  id = "read1"
  name = "read_file"
  arguments = '{"path":"notes.txt"}'

[[step]]
match.last_tool_result_contains = "UNSAVED in the editor"
text = ["I see your unsaved line. "]
  [[step.tool_call]]
  id = "edit1"
  name = "edit_file"
  arguments = '{"path":"notes.txt","old_string":"UNSAVED in the editor","new_string":"tidied by loom"}'

[[step]]
match.last_tool_result_contains = "notes.txt"
text = ["Done."]
`

// TestCoreScenario: initialize, a new session, a prompt whose tools read
// the user's unsaved buffer through fs/read_text_file and write through
// fs/write_text_file, with the tool calls' whole lifecycle streamed, and
// the hook leaving uncommitted an edit mixed with the user's unsaved text.
func TestCoreScenario(t *testing.T) {
	dir := repo(t, map[string]string{"notes.txt": "first line\nsaved on disk\n"})
	h := start(t, writeScript(t, readEditScript), "", nil)
	init := h.initialize(true, true)
	if init.ProtocolVersion != 1 || !init.AgentCapabilities.LoadSession || !init.AgentCapabilities.PromptCapabilities.EmbeddedContext ||
		!init.AgentCapabilities.PromptCapabilities.Image || init.AgentCapabilities.SessionCapabilities.List == nil ||
		init.AgentCapabilities.SessionCapabilities.Resume == nil || init.AuthMethods == nil || init.AgentInfo == nil || init.AgentInfo.Name != "loom-lsp" {
		t.Fatalf("initialize answered %+v", init)
	}
	notes := filepath.Join(dir, "notes.txt")
	h.client.buffers[notes] = "first line\nUNSAVED in the editor\n"
	id := h.newSession(dir)
	h.mustPrompt(id, "please tidy notes.txt", acpsdk.StopReasonEndTurn)

	ups := h.client.snapshot()
	if got := agentText(ups); got != "Let me look at the notes.I see your unsaved line. Done." {
		t.Errorf("agent text %q\n%s", got, describe(ups))
	}
	if len(h.client.reads) == 0 || h.client.reads[0] != notes {
		t.Errorf("fs/read_text_file requests %v, want %s first", h.client.reads, notes)
	}
	// The read: tool_call (kind read, title, location, rawInput), then
	// in_progress, then completed with the text the model read.
	var read, edit []acpsdk.SessionUpdate
	for _, n := range ups {
		if n.SessionId != id {
			t.Errorf("update for session %q, want %q", n.SessionId, id)
		}
		if c := n.Update.ToolCall; c != nil {
			switch c.ToolCallId {
			case "read1":
				read = append(read, n.Update)
			case "edit1":
				edit = append(edit, n.Update)
			}
		}
		if c := n.Update.ToolCallUpdate; c != nil {
			switch c.ToolCallId {
			case "read1":
				read = append(read, n.Update)
			case "edit1":
				edit = append(edit, n.Update)
			}
		}
	}
	if len(read) != 3 || read[0].ToolCall == nil || read[0].ToolCall.Kind != acpsdk.ToolKindRead || read[0].ToolCall.Title != "Read notes.txt" ||
		read[0].ToolCall.Status != acpsdk.ToolCallStatusPending || len(read[0].ToolCall.Locations) != 1 || read[0].ToolCall.Locations[0].Path != notes {
		t.Fatalf("read_file's updates:\n%s", describe(ups))
	}
	if raw, ok := read[0].ToolCall.RawInput.(map[string]any); !ok || raw["path"] != "notes.txt" {
		t.Errorf("rawInput %#v", read[0].ToolCall.RawInput)
	}
	if s := read[1].ToolCallUpdate.Status; s == nil || *s != acpsdk.ToolCallStatusInProgress {
		t.Errorf("second read update is not in_progress")
	}
	fin := read[2].ToolCallUpdate
	if fin.Status == nil || *fin.Status != acpsdk.ToolCallStatusCompleted || len(fin.Content) == 0 || fin.Content[0].Content == nil ||
		!strings.Contains(fin.Content[0].Content.Content.Text.Text, "UNSAVED in the editor") {
		t.Errorf("read_file's last update %+v", fin)
	}
	// The edit: kind edit, and a diff item with the whole texts.
	if len(edit) != 3 || edit[0].ToolCall.Kind != acpsdk.ToolKindEdit || edit[0].ToolCall.Title != "Edit notes.txt" {
		t.Fatalf("edit_file's updates:\n%s", describe(ups))
	}
	var diff *acpsdk.ToolCallContentDiff
	for _, c := range edit[2].ToolCallUpdate.Content {
		if c.Diff != nil {
			diff = c.Diff
		}
	}
	want := "first line\ntidied by loom\n"
	if diff == nil || diff.Path != notes || diff.OldText == nil || *diff.OldText != "first line\nUNSAVED in the editor\n" || diff.NewText != want {
		t.Errorf("edit diff %+v", diff)
	}
	if loc := edit[2].ToolCallUpdate.Locations; len(loc) != 1 || loc[0].Line == nil || *loc[0].Line != 2 {
		t.Errorf("edit locations %+v, want line 2", loc)
	}
	if got := h.client.writes[notes]; got != want {
		t.Errorf("fs/write_text_file wrote %q, want %q", got, want)
	}
	// The agent's edit replaced the user's unsaved line: its hunk cannot
	// be told apart from the user's change, so the hook commits nothing
	// (gitcommit's rule: no byte of the user's goes into a commit).
	if got := gittest.Run(t, dir, "show", "HEAD:notes.txt"); got != "first line\nsaved on disk\n" {
		t.Errorf("HEAD:notes.txt = %q, want the user's last commit", got)
	}
	// The user is told, in the session's own updates (ACP has no other
	// place), why the file was left uncommitted.
	var thoughts strings.Builder
	for _, n := range ups {
		if c := n.Update.AgentThoughtChunk; c != nil && c.Content.Text != nil {
			thoughts.WriteString(c.Content.Text.Text)
		}
	}
	if !strings.Contains(thoughts.String(), "not committed: notes.txt, because the agent's change overlaps your own uncommitted changes") {
		t.Errorf("the hook's note is not shown; thoughts:\n%s", thoughts.String())
	}
}

// TestDiskWhenTheClientCannot: a client without fs capabilities gets
// nothing asked; the tools read and write the disk.
func TestDiskWhenTheClientCannot(t *testing.T) {
	dir := repo(t, map[string]string{"notes.txt": "UNSAVED in the editor\n"})
	h := start(t, writeScript(t, readEditScript), "", nil)
	h.initialize(false, false)
	id := h.newSession(dir)
	h.mustPrompt(id, "tidy notes", acpsdk.StopReasonEndTurn)
	if len(h.client.reads) != 0 || len(h.client.writes) != 0 {
		t.Errorf("the client was asked to read %v / write %v without advertising it", h.client.reads, h.client.writes)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "notes.txt"))
	if string(b) != "tidied by loom\n" {
		t.Errorf("notes.txt = %q", b)
	}
}

const bashScript = `
[[step]]
match.last_user_contains = "make marker"
match.last_role = "user"
repeat = true
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"echo ran >> marker.txt"}'

[[step]]
match.last_role = "tool"
repeat = true
text = ["finished"]
`

func permitWith(option string) func(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return func(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{
			Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: acpsdk.PermissionOptionId(option)}}}, nil
	}
}

// TestPermission: bash under "ask" asks with four options; allow_once
// runs it, reject_once does not, allow_always runs it and is not asked
// again in the session, a cancelled outcome is a denial.
func TestPermission(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	marker := filepath.Join(dir, "marker.txt")
	runs := func() int {
		b, _ := os.ReadFile(marker)
		return strings.Count(string(b), "ran")
	}
	h := start(t, writeScript(t, bashScript), "", nil)
	h.initialize(true, true)
	id := h.newSession(dir)

	h.client.permit = permitWith(optionRejectOnce)
	h.mustPrompt(id, "make marker", acpsdk.StopReasonEndTurn)
	if runs() != 0 {
		t.Fatalf("the command ran although the user rejected it")
	}
	req := h.client.permissions[0]
	var kinds []string
	for _, o := range req.Options {
		kinds = append(kinds, string(o.Kind))
	}
	if strings.Join(kinds, ",") != "allow_once,allow_always,allow_always,allow_always,reject_once,reject_always" {
		t.Errorf("options %v", kinds)
	}
	if req.ToolCall.Kind == nil || *req.ToolCall.Kind != acpsdk.ToolKindExecute || req.ToolCall.Title == nil || *req.ToolCall.Title != "Run `echo ran >> marker.txt`" {
		t.Errorf("permission tool call %+v", req.ToolCall)
	}
	h.client.await(t, "the rejected call to fail", func(ns []acpsdk.SessionNotification) bool {
		for _, n := range ns {
			if u := n.Update.ToolCallUpdate; u != nil && u.ToolCallId == req.ToolCall.ToolCallId && u.Status != nil && *u.Status == acpsdk.ToolCallStatusFailed {
				return true
			}
		}
		return false
	})

	h.client.permit = nil // the client answers cancelled
	h.mustPrompt(id, "make marker", acpsdk.StopReasonEndTurn)
	if runs() != 0 {
		t.Fatalf("the command ran on a cancelled permission request")
	}

	h.client.permit = permitWith(optionAllowOnce)
	h.mustPrompt(id, "make marker", acpsdk.StopReasonEndTurn)
	if runs() != 1 {
		t.Fatalf("allow_once: the command ran %d times", runs())
	}
	// What the command changed is shown, with its diff, and not committed.
	h.client.await(t, "the command's change reported", func(ns []acpsdk.SessionNotification) bool {
		for _, n := range ns {
			if c := n.Update.AgentThoughtChunk; c != nil && c.Content.Text != nil &&
				strings.Contains(c.Content.Text.Text, "changed by `echo ran >> marker.txt` — not committed: marker.txt") && strings.Contains(c.Content.Text.Text, "+ran") {
				return true
			}
		}
		return false
	})
	if files := gittest.Run(t, dir, "ls-tree", "--name-only", "HEAD"); strings.Contains(files, "marker.txt") {
		t.Fatalf("the command's file was committed: %s", files)
	}

	h.client.permit = permitWith(optionAllowAlways)
	h.mustPrompt(id, "make marker", acpsdk.StopReasonEndTurn)
	asked := len(h.client.permissions)
	h.client.permit = permitWith(optionRejectOnce) // must not be asked
	h.mustPrompt(id, "make marker", acpsdk.StopReasonEndTurn)
	if runs() != 3 || len(h.client.permissions) != asked {
		t.Fatalf("allow_always: ran %d times (want 3), asked %d times (want %d)", runs(), len(h.client.permissions), asked)
	}
}

// TestBadInput: invalid params get -32602 with a message, and the agent
// goes on.
func TestBadInput(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	h := start(t, writeScript(t, bashScript), "", nil)
	h.initialize(false, false)
	ctx := testCtx(t)
	var re *acpsdk.RequestError
	_, err := h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: "relative/dir", McpServers: []acpsdk.McpServer{}})
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "not an absolute path") {
		t.Errorf("relative cwd: %v", err)
	}
	_, err = h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: filepath.Join(dir, "missing"), McpServers: []acpsdk.McpServer{}})
	if !errors.As(err, &re) || re.Code != -32602 {
		t.Errorf("missing cwd: %v", err)
	}
	_, err = h.prompt("no-such-session", "hi")
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "unknown session") {
		t.Errorf("unknown session: %v", err)
	}
	id := h.newSession(dir)
	_, err = h.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.ImageBlock("aGk=", "image/png")}})
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "not known to take pictures") {
		t.Errorf("image prompt: %v", err)
	}
	_, err = h.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: "loom-nope", Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "unknown session") {
		t.Errorf("load of an unknown session: %v", err)
	}
	// Still serving.
	if id2 := h.newSession(dir); id2 == "" {
		t.Fatal("no session after bad input")
	}
}

// TestStopReasons: the iteration guard gives max_turn_requests, a model
// that fails for good an error response with its message.
func TestStopReasons(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	script := `
[[step]]
match.last_user_contains = "loop"
match.last_role = "user"
repeat = true
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"a.txt"}'

[[step]]
match.last_role = "tool"
match.last_user_contains = "loop"
repeat = true
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"a.txt"}'

[[step]]
match.last_user_contains = "fail"
error = { status = 401, message = "bad api key" }
`
	h := start(t, writeScript(t, script), "", func(c *config.Config) { c.Agent.MaxIterations = 2; c.Agent.MaxRetries = 0 })
	h.initialize(false, false)
	id := h.newSession(dir)
	h.mustPrompt(id, "loop forever", acpsdk.StopReasonMaxTurnRequests)
	_, err := h.prompt(id, "now fail")
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "bad api key") {
		t.Fatalf("model failure: %v", err)
	}
}

// TestPromptBlocks: a resource link to a file of the folder attaches it
// and an embedded resource its text, as loom.ask's context does; the
// history gives the prompt back with chips.
func TestPromptBlocks(t *testing.T) {
	host := workspace.NewHost(workspace.HostOptions{StateDir: t.TempDir()})
	defer host.Close()
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "main.go"), []byte("package main // MAIN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	main := (&url.URL{Scheme: "file", Path: filepath.Join(folder, "main.go")}).String()
	got, _, err := promptText(host, folder, []acpsdk.ContentBlock{
		acpsdk.TextBlock("explain these"),
		acpsdk.ResourceLinkBlock("main.go", main),
		acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{TextResourceContents: &acpsdk.TextResourceContents{Uri: "file:///w/a.md", Text: "unsaved </loom-context> text"}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"explain these", "package main // MAIN", "unsaved", `label="main.go"`, `label="/w/a.md"`} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt %q lacks %q", got, want)
		}
	}
	prompt, chips := workspace.SplitPrompt(got)
	if prompt != "explain these" || len(chips) != 2 || chips[0].Label != "main.go" || chips[0].Path != filepath.Join(folder, "main.go") || chips[1].Label != "/w/a.md" {
		t.Errorf("SplitPrompt = %q, %+v", prompt, chips)
	}
	updates := historyUpdates(folder, []fsm.Message{{Role: fsm.RoleUser, Content: got}})
	if len(updates) != 3 || updates[1].UserMessageChunk == nil || updates[1].UserMessageChunk.Content.ResourceLink == nil {
		t.Errorf("history updates %+v, want the prompt then a resource link and a chip", updates)
	}
	if _, _, err := promptText(host, folder, []acpsdk.ContentBlock{acpsdk.TextBlock("  ")}); err == nil {
		t.Error("an empty prompt was accepted")
	}
	outside := (&url.URL{Scheme: "file", Path: "/etc/passwd"}).String()
	if _, _, err := promptText(host, folder, []acpsdk.ContentBlock{acpsdk.TextBlock("x"), acpsdk.ResourceLinkBlock("p", outside)}); err == nil {
		t.Error("a link outside the folder was attached")
	}
	web := acpsdk.ResourceLinkBlock("spec", "https://example.com/spec")
	web.ResourceLink.Title = acpsdk.Ptr("The spec")
	if got, _, err := promptText(host, folder, []acpsdk.ContentBlock{acpsdk.TextBlock("read"), web}); err != nil ||
		!strings.Contains(got, "link: https://example.com/spec") || !strings.Contains(got, `label="The spec"`) {
		t.Errorf("a web link: %q, %v; want it named in a text item labelled with its title", got, err)
	}
	for name, res := range map[string]acpsdk.EmbeddedResourceResource{
		"binary resources are not supported": {BlobResourceContents: &acpsdk.BlobResourceContents{Uri: "file:///w/a.png", Blob: "AA=="}},
		"empty resource":                     {},
	} {
		if _, _, err := promptText(host, folder, []acpsdk.ContentBlock{acpsdk.TextBlock("x"), acpsdk.ResourceBlock(res)}); err == nil || !strings.Contains(err.Error(), "prompt block 1: "+name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

const slowScript = `
[[step]]
match.last_user_contains = "tell a long story"
pace = "200ms"
text = ["Once ", "upon ", "a ", "time ", "there ", "was ", "a ", "very ", "long ", "story ", "that ", "went ", "on ", "and ", "on ", "and ", "on ", "and ", "on ", "and ", "on ", "and ", "on ", "forever."]

[[step]]
match.last_user_contains = "again"
text = ["short answer"]

[[step]]
match.last_user_contains = "make marker"
  [[step.tool_call]]
  id = "bash1"
  name = "bash"
  arguments = '{"command":"echo ran >> marker.txt"}'
`

// promptAsync sends a prompt and returns where its answer arrives.
func (h *harness) promptAsync(id acpsdk.SessionId, text string) <-chan promptResult {
	ch := make(chan promptResult, 1)
	go func() {
		resp, err := h.prompt(id, text)
		ch <- promptResult{resp, err}
	}()
	return ch
}

type promptResult struct {
	resp acpsdk.PromptResponse
	err  error
}

func (h *harness) awaitResult(ch <-chan promptResult) promptResult {
	h.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-testCtx(h.t).Done():
		h.t.Fatalf("session/prompt did not answer\n%s", describe(h.client.snapshot()))
	}
	return promptResult{}
}

// TestCancelMidStream: session/cancel while the model streams answers the
// prompt with stopReason cancelled (a result, not an error), keeps the
// streamed text, and the next prompt works.
func TestCancelMidStream(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	h := start(t, writeScript(t, slowScript), "", nil)
	h.initialize(true, true)
	id := h.newSession(dir)
	ch := h.promptAsync(id, "tell a long story")
	h.client.await(t, "the first chunk", func(ns []acpsdk.SessionNotification) bool { return strings.Contains(agentText(ns), "Once") })
	if err := h.conn.Cancel(testCtx(t), acpsdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	r := h.awaitResult(ch)
	if r.err != nil || r.resp.StopReason != acpsdk.StopReasonCancelled {
		t.Fatalf("cancelled prompt answered %+v, %v", r.resp, r.err)
	}
	if strings.Contains(agentText(h.client.snapshot()), "forever") {
		t.Fatal("the whole story streamed: the cancel did not stop it")
	}
	h.mustPrompt(id, "again", acpsdk.StopReasonEndTurn)
	if !strings.HasSuffix(agentText(h.client.snapshot()), "short answer") {
		t.Errorf("after the cancel: %q", agentText(h.client.snapshot()))
	}
}

// TestCancelWhilePermissionPending: session/cancel while the client is
// asked to approve a command cancels the request; the command never runs,
// its tool call ends failed, and the prompt answers cancelled.
func TestCancelWhilePermissionPending(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	h := start(t, writeScript(t, slowScript), "", nil)
	h.initialize(true, true)
	asked := make(chan struct{})
	h.client.permit = func(ctx context.Context, _ acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		close(asked)
		<-ctx.Done() // the agent withdraws the request ($/cancel_request)
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: optionAllowOnce}}}, nil
	}
	id := h.newSession(dir)
	ch := h.promptAsync(id, "make marker")
	select {
	case <-asked:
	case <-testCtx(t).Done():
		t.Fatal("no permission request")
	}
	if err := h.conn.Cancel(testCtx(t), acpsdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	r := h.awaitResult(ch)
	if r.err != nil || r.resp.StopReason != acpsdk.StopReasonCancelled {
		t.Fatalf("prompt answered %+v, %v", r.resp, r.err)
	}
	if _, err := os.Stat(filepath.Join(dir, "marker.txt")); err == nil {
		t.Fatal("the command ran after the cancel")
	}
	// The call's last update came before the answer.
	var last *acpsdk.SessionToolCallUpdate
	for _, n := range h.client.snapshot() {
		if u := n.Update.ToolCallUpdate; u != nil && u.ToolCallId == "bash1" {
			last = u
		}
	}
	if last == nil || last.Status == nil || *last.Status != acpsdk.ToolCallStatusFailed {
		t.Fatalf("the cancelled call's last update %+v\n%s", last, describe(h.client.snapshot()))
	}
	h.mustPrompt(id, "again", acpsdk.StopReasonEndTurn)
}
