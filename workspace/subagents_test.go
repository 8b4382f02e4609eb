package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// childTask is the task of the conversation req belongs to when it is a
// subagent's ("" for the user's own conversation): its first user
// message after a system prompt that says it is a subagent.
func childTask(req llm.Request) string {
	if len(req.Messages) == 0 || !strings.Contains(req.Messages[0].Content, "## You are a subagent") {
		return ""
	}
	for _, m := range req.Messages {
		if m.Role == fsm.RoleUser && !m.Note {
			return m.Content
		}
	}
	return ""
}

func agentCall(id, agent, task string) fsm.ToolCall {
	args, _ := json.Marshal(map[string]string{"agent": agent, "task": task})
	return call(id, fsm.AgentTool, string(args))
}

// toolResults are the tool results of the request's messages, by call id.
func toolResults(req llm.Request) map[string]string {
	out := map[string]string{}
	for _, m := range req.Messages {
		if m.Role == fsm.RoleTool {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// Two read-only children run at once (each waits at a barrier until the
// other has started), each reads its file, and the parent gets both
// answers as its calls' results. Both journals replay to what ran.
func TestSubagentsResearchersInParallel(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a // alpha\n", "b.go": "package b // beta\n"})
	both := newBarrier(2)
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		task := childTask(req)
		res, isResult := lastToolResult(req)
		switch {
		case task == "":
			if !isResult {
				respond(req, emit, "", agentCall("r1", "researcher", "read a.go"), agentCall("r2", "researcher", "read b.go"))
				return
			}
			r := toolResults(req)
			respond(req, emit, "parent: "+r["r1"]+" | "+r["r2"])
		case !isResult:
			both.wait(ctx, task) // in parallel, or never
			file := strings.TrimPrefix(task, "read ")
			respond(req, emit, "", call("c-"+file, "read_file", `{"path":"`+file+`"}`))
		default:
			respond(req, emit, "child found "+strings.TrimSpace(res))
		}
	})
	h := newTestHost(t, model, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	turn, err := s.Ask(ctx, "look at both files")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.turnEndedIn(t, s.ID(), turn)
	text := h.editor.text(turn)
	for _, want := range []string{"alpha", "beta", "parent: child found"} {
		if !strings.Contains(text, want) {
			t.Fatalf("parent's answer %q lacks %q", text, want)
		}
	}
	// Each child was shown, named, started and ended.
	var started, completed int
	h.editor.mu.Lock()
	for _, n := range h.editor.notes {
		if n.Kind == NoteSubagent && n.Subagent != nil && n.Subagent.Agent == "researcher" && n.Subagent.ReadOnly {
			switch {
			case n.Subagent.Activity != "":
				// an update while it runs
			case n.Subagent.State == "running":
				started++
			case n.Subagent.State == "completed":
				completed++
			}
		}
	}
	h.editor.mu.Unlock()
	if started != 2 || completed != 2 {
		t.Fatalf("subagent notes: %d started, %d completed", started, completed)
	}
	checkReplays(t, s)
}

// checkReplays replays the parent's journal and each child's, and
// compares them with what ran: the parent's replay shows the children's
// answers without running them.
func checkReplays(t *testing.T, s *Conversation) {
	t.Helper()
	var path string
	var live []fsm.Message
	var cfg fsm.Config
	if err := s.loop.call(context.Background(), func() {
		path, live, cfg = s.ident.journal(), append([]fsm.Message(nil), s.m.Messages()...), s.machineConfig()
		s.jr.sync()
	}); err != nil {
		t.Fatal(err)
	}
	rp, err := journal.Replay(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rp.M.Messages(), live) {
		t.Fatalf("the parent's replay differs:\n%+v\nlive:\n%+v", rp.M.Messages(), live)
	}
	children, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "subagents", "*.jsonl"))
	if len(children) == 0 {
		t.Fatalf("no child journal beside %s", path)
	}
	for _, c := range children {
		crp, err := journal.Replay(c, fsm.Config{})
		if err != nil {
			t.Fatal(err)
		}
		answer := lastAnswer(crp.M.Messages())
		found := false
		for _, m := range live {
			if m.Role == fsm.RoleTool && strings.Contains(m.Content, answer) && answer != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("child journal %s replays to the answer %q, which the parent never got", filepath.Base(c), answer)
		}
	}
}

// A child of a plan-mode conversation is read-only whatever its
// definition: the worker's write and command are refused, nothing is
// written, nothing runs.
func TestSubagentOfPlanModeCannotWriteOrRun(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
	var mu sync.Mutex
	var childResults map[string]string
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		task := childTask(req)
		_, isResult := lastToolResult(req)
		switch {
		case task == "" && !isResult:
			respond(req, emit, "", agentCall("w1", "worker", "change a.go"))
		case task == "":
			respond(req, emit, "parent done")
		case !isResult:
			respond(req, emit, "", call("e1", "write_file", `{"path":"a.go","content":"package b\n"}`), call("e2", "bash", `{"command":"touch ran"}`))
		default:
			mu.Lock()
			childResults = toolResults(req)
			mu.Unlock()
			respond(req, emit, "child done")
		}
	})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Controls().SetMode(ctx, fsm.ModePlan); err != nil {
		t.Fatal(err)
	}
	turn, err := s.Ask(ctx, "plan a change")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.turnEndedIn(t, s.ID(), turn)
	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{"e1", "e2"} {
		if !strings.Contains(childResults[id], "you are a read-only agent") {
			t.Errorf("child call %s: %q, want a read-only refusal", id, childResults[id])
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(data) != "package a\n" {
		t.Errorf("a.go written: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Errorf("the child's command ran")
	}
}

// A child's approval request reaches the user through the same editor,
// named as the child's and routed to the top conversation; the parent's
// agent call says the child waits; the user's denial reaches the child.
func TestSubagentApprovalReachesUserAndDenialReachesChild(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
	var mu sync.Mutex
	var childResult string
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		task := childTask(req)
		res, isResult := lastToolResult(req)
		switch {
		case task == "" && !isResult:
			respond(req, emit, "", agentCall("w1", "worker", "run the tests"))
		case task == "":
			respond(req, emit, "parent got: "+res)
		case !isResult:
			respond(req, emit, "", call("b1", "bash", `{"command":"touch ran"}`))
		default:
			mu.Lock()
			childResult = res
			mu.Unlock()
			respond(req, emit, "I could not run it")
		}
	})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAsk })
	var asked []Approval
	h.editor.approve = func(a Approval) (bool, error) {
		mu.Lock()
		asked = append(asked, a)
		mu.Unlock()
		return false, nil
	}
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Ask(context.Background(), "test it")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.turnEndedIn(t, s.ID(), turn)
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].Subagent == nil || asked[0].Conversation != s.ID() || asked[0].Subagent.Agent != "worker" ||
		!strings.Contains(asked[0].Subagent.Words(), "subagent worker") || !strings.Contains(asked[0].Subagent.Words(), "run the tests") {
		t.Fatalf("approvals asked: %+v", asked)
	}
	if !strings.Contains(childResult, "denied by the user") {
		t.Fatalf("the child read %q, want the denial", childResult)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatalf("the denied command ran")
	}
	h.editor.waitFor(t, "the parent's agent call to say the child waits", func(n Notification) bool {
		return n.Conversation == s.ID() && n.Kind == NoteTool && n.Tool != nil && n.Tool.CallID == "w1" && strings.Contains(n.Tool.Detail, "waits for your approval")
	})
}

// The caps through the whole stack: a child cannot spawn (depth), a
// child past its token budget is stopped and the parent's model reads
// why, and a fifth child at once is refused (four run at once).
func TestSubagentCaps(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
	release := make(chan struct{})
	var mu sync.Mutex
	parentResults := map[string]map[string]string{} // by prompt
	var deepResults map[string]string
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		task := childTask(req)
		res, isResult := lastToolResult(req)
		prompt := lastUserPrompt(req)
		switch {
		case task == "" && !isResult && prompt == "depth and tokens":
			respond(req, emit, "", agentCall("d", "worker", "go deeper"), agentCall("t", "researcher", "burn tokens"))
		case task == "" && !isResult:
			respond(req, emit, "", agentCall("x1", "researcher", "wait 1"), agentCall("x2", "researcher", "wait 2"),
				agentCall("x3", "researcher", "wait 3"), agentCall("x4", "researcher", "wait 4"), agentCall("x5", "researcher", "wait 5"))
		case task == "":
			mu.Lock()
			parentResults[prompt] = toolResults(req)
			mu.Unlock()
			respond(req, emit, "parent done")
		case task == "go deeper" && !isResult:
			respond(req, emit, "", agentCall("g", "researcher", "grandchild"))
		case task == "go deeper":
			mu.Lock()
			deepResults = map[string]string{"g": res}
			mu.Unlock()
			respond(req, emit, "could not go deeper")
		case task == "burn tokens":
			emit(fsm.LlmTextDelta{Request: req.ID, Text: "thinking a lot"})
			emit(fsm.LlmCompleted{Request: req.ID, ToolCalls: []fsm.ToolCall{call("r", "read_file", `{"path":"a.go"}`)},
				Usage: fsm.Usage{PromptTokens: 250_000, CompletionTokens: 1, TotalTokens: 250_001}})
		default: // the waiting ones hold their places until a call was refused
			select {
			case <-release:
			case <-ctx.Done():
				return
			}
			respond(req, emit, "waited")
		}
	})
	h := newTestHost(t, model, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}

	// Depth and tokens: two children, far from the running cap.
	turn, err := s.Ask(context.Background(), "depth and tokens")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.turnEndedIn(t, s.ID(), turn)
	mu.Lock()
	if !strings.Contains(deepResults["g"], "a subagent cannot start subagents") {
		t.Errorf("the grandchild's call: %q", deepResults["g"])
	}
	if r := parentResults["depth and tokens"]["t"]; !strings.Contains(r, "the subagent was stopped: it used 250001 tokens") {
		t.Errorf("the token-capped child's result: %q", r)
	}
	mu.Unlock()

	// The running cap: five children that all hold their places until
	// one call was refused, so exactly one finds four running, whatever
	// order the machine takes them in.
	turn, err = s.Ask(context.Background(), "five at once")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.waitFor(t, "a call refused by the running cap", func(n Notification) bool {
		return n.Kind == NoteTool && n.Tool != nil && strings.Contains(n.Tool.Output, "the cap at once")
	})
	close(release)
	h.editor.turnEndedIn(t, s.ID(), turn)
	mu.Lock()
	defer mu.Unlock()
	refused := 0
	for _, r := range parentResults["five at once"] {
		if strings.Contains(r, "the cap at once") {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d calls refused by the running cap, want 1: %v", refused, parentResults["five at once"])
	}
}

// lastUserPrompt is the last user message of a request that is not a
// note.
func lastUserPrompt(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == fsm.RoleUser && !m.Note {
			return m.Content
		}
	}
	return ""
}

// Cancelling the parent cancels its children: the child's command is
// killed (its marker never appears), the child is said cancelled, and
// the parent's turn ends.
func TestSubagentCancelCascades(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
	marker := filepath.Join(t.TempDir(), "marker")
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		task := childTask(req)
		_, isResult := lastToolResult(req)
		switch {
		case task == "" && !isResult:
			respond(req, emit, "", agentCall("w1", "worker", "run long"))
		case task == "":
			respond(req, emit, "parent done")
		case !isResult:
			respond(req, emit, "", call("b1", "bash", `{"command":"sleep 60; touch `+marker+`"}`))
		default:
			respond(req, emit, "child done")
		}
	})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Ask(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.waitFor(t, "the child's command to run", func(n Notification) bool {
		return n.Subagent != nil && n.Kind == NoteTool && n.Tool != nil && n.Tool.CallID == "b1" && n.Tool.Status == fsm.ToolRunning
	})
	start := time.Now()
	if err := s.Cancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := h.editor.turnEndedIn(t, s.ID(), turn); n.Outcome != fsm.TurnCancelled {
		t.Fatalf("the parent's turn ended %s", n.Outcome)
	}
	h.editor.waitFor(t, "the child to be said cancelled", func(n Notification) bool {
		return n.Kind == NoteSubagent && n.Subagent != nil && n.Subagent.State == "cancelled"
	})
	h.editor.waitFor(t, "the child's own turn to end", func(n Notification) bool {
		return n.Subagent != nil && n.Kind == NoteTurnEnded
	})
	if time.Since(start) > 50*time.Second {
		t.Fatalf("the cancel took %s: the child's command was not killed", time.Since(start))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the child's command ran to its end")
	}
}

// A repository's agent definition is bound to trust like its hooks: in
// a folder not trusted it is held back and named, and the agent tool
// does not offer it; the built-ins are always there.
func TestSubagentDefinitionsHeldBackUntrusted(t *testing.T) {
	dir := gitRepo(t, map[string]string{".claude/agents/rev.md": "---\nname: rev\ndescription: reviews\ntools: Read, Bash\n---\nbe thorough\n"})
	var mu sync.Mutex
	var result string
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		res, isResult := lastToolResult(req)
		if !isResult {
			respond(req, emit, "", agentCall("v1", "rev", "review it"))
			return
		}
		mu.Lock()
		result = res
		mu.Unlock()
		respond(req, emit, "ok")
	})
	h := newTestHost(t, model, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	h.editor.waitFor(t, "the held-back definition to be named", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, "agent rev held back: the folder is not trusted")
	})
	turn, err := s.Ask(context.Background(), "review")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.turnEndedIn(t, s.ID(), turn)
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(result, `no agent "rev"; the agents are: researcher, worker`) {
		t.Fatalf("the call of an untrusted definition: %q", result)
	}
}
