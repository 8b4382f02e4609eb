package jsonrpc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
)

// bashScript is a model that, for the prompt "run N", runs commands[N]
// with bash, then says "done N".
func bashScript(commands ...string) string {
	var b strings.Builder
	for i, c := range commands {
		arg, _ := json.Marshal(map[string]string{"command": c})
		fmt.Fprintf(&b, "[[step]]\nmatch.last_user_contains = %q\n  [[step.tool_call]]\n  name = \"bash\"\n  arguments = '%s'\n\n", fmt.Sprintf("run %d.", i), arg)
		fmt.Fprintf(&b, "[[step]]\nmatch.last_role = \"tool\"\ntext = [%q]\n\n", fmt.Sprintf("done %d", i))
	}
	return b.String()
}

// approvalAsked is what the fake editor saw of one approval request.
type approvalAsked struct {
	Message string           `json:"message"`
	Actions []ApprovalAction `json:"actions"`
	Loom    ApprovalInfo     `json:"loom"`
}

// answerer answers approval requests with a scripted choice per request.
type answerer struct {
	mu     sync.Mutex
	asked  []approvalAsked
	choose func(a approvalAsked) any
}

func (an *answerer) hook(raw json.RawMessage) any {
	var a approvalAsked
	_ = json.Unmarshal(raw, &a)
	an.mu.Lock()
	an.asked = append(an.asked, a)
	choose := an.choose
	an.mu.Unlock()
	return choose(a)
}

func (an *answerer) count() int {
	an.mu.Lock()
	defer an.mu.Unlock()
	return len(an.asked)
}

func (an *answerer) last() approvalAsked {
	an.mu.Lock()
	defer an.mu.Unlock()
	return an.asked[len(an.asked)-1]
}

func ruleAction(a approvalAsked, kind string) *ApprovalAction {
	for _, x := range a.Actions {
		if x.Rule != nil && (kind == "exact") == (x.Rule.Exact != "") {
			return &x
		}
	}
	return nil
}

// runTurn asks "run N." and waits for the turn's end; it returns the last
// status and detail of the turn's bash call.
func (e *env) runTurn(n int) ToolCallParams {
	e.t.Helper()
	from := len(e.ed.Messages(""))
	res := e.ask(fmt.Sprintf("run %d.", n))
	e.await(fmt.Sprintf("turn %d ended", n), turnEnded(e.folder, from))
	var last ToolCallParams
	for _, c := range toolCalls(e.t, e.ed.Messages("")[from:], "bash") {
		if c.Turn == res.Turn {
			last = c
		}
	}
	return last
}

func TestApprovalRules(t *testing.T) {
	commands := []string{
		"echo hello",                  // 0: asked, "always allow `echo hello`"
		"echo hello",                  // 1: runs unasked
		"echo bye",                    // 2: asked (not the exact command), denied
		"ls -a",                       // 3: asked, prefix edited to `ls`
		"ls -la . | wc -l",            // 4: asked: wc is not allowed; allowed once
		"ls -l",                       // 5: runs unasked
		"ls; touch pwned",             // 6: asked, denied
		"echo hello $(touch pwned2)",  // 7: asked, no rule offered, denied
		"echo hello > ../outside.txt", // 8: asked, no rule offered, denied
	}
	an := &answerer{}
	e := newEnv(t, envOptions{
		script:  bashScript(commands...),
		cfg:     loomClient,
		options: map[string]any{"tools": map[string]any{"bash": "ask"}},
		hooks:   fakeeditor.Hooks{RawShowMessageRequest: an.hook},
	})
	deny := map[string]any{"title": approveDeny}
	allow := map[string]any{"title": approveAllow}

	// 0: the exact rule, as offered.
	an.choose = func(a approvalAsked) any { return ruleAction(a, "exact") }
	if c := e.runTurn(0); c.Status != "succeeded" {
		t.Fatalf("turn 0: bash %s, want succeeded", c.Status)
	}
	first := an.last()
	if first.Loom.Command != "echo hello" || first.Loom.Tool != "bash" || first.Loom.CallID == "" {
		t.Errorf("approval info %+v, want the command echo hello", first.Loom)
	}
	if a := ruleAction(first, "exact"); a == nil || a.Rule.Exact != "echo hello" || a.Title != "Always allow `echo hello`" {
		t.Errorf("exact action %+v", a)
	}
	if a := ruleAction(first, "prefix"); a == nil || a.Rule.Prefix != "echo" {
		t.Errorf("prefix action %+v, want echo (a prefixable program: its words are data)", a)
	}
	e.await("rule saved notice", hasMethod("loom/notice", "without asking"))

	// 1: runs without asking.
	asked := an.count()
	an.choose = func(approvalAsked) any { t.Error("asked for an allowed command"); return deny }
	c := e.runTurn(1)
	if c.Status != "succeeded" || an.count() != asked {
		t.Fatalf("turn 1: bash %s after %d approvals, want succeeded unasked", c.Status, an.count()-asked)
	}
	if !hasDetail(t, e.ed.Messages(MethodToolCall), "allowed by the rule `echo hello`") {
		t.Errorf("no tool call says which rule allowed it")
	}

	// 2: another command is asked.
	an.choose = func(approvalAsked) any { return deny }
	if c := e.runTurn(2); c.Status != "failed" || an.count() != asked+1 {
		t.Fatalf("turn 2: bash %s, asked %d times, want failed after one question", c.Status, an.count()-asked)
	}

	// 3: the prefix, edited by the user from `ls` (the suggestion) to... `ls` still, sent back with spaces.
	an.choose = func(a approvalAsked) any {
		p := ruleAction(a, "prefix")
		if p == nil {
			t.Errorf("no prefix action for ls -a: %+v", a.Actions)
			return deny
		}
		return map[string]any{"title": p.Title, "rule": map[string]string{"prefix": "  ls  "}}
	}
	if c := e.runTurn(3); c.Status != "succeeded" {
		t.Fatalf("turn 3: bash %s", c.Status)
	}

	// 4: a pipeline with an unallowed piece asks; its prefix action names wc.
	an.choose = func(a approvalAsked) any {
		if p := ruleAction(a, "prefix"); p == nil || p.Rule.Prefix != "wc" {
			t.Errorf("prefix action for ls | wc: %+v, want wc (ls is allowed already)", p)
		}
		return allow
	}
	if c := e.runTurn(4); c.Status != "succeeded" {
		t.Fatalf("turn 4: bash %s", c.Status)
	}

	// 5: covered by the edited prefix.
	asked = an.count()
	an.choose = func(approvalAsked) any { t.Error("asked for ls -l"); return deny }
	if c := e.runTurn(5); c.Status != "succeeded" || an.count() != asked {
		t.Fatalf("turn 5: bash %s, want succeeded unasked", c.Status)
	}

	// 6-8: attacks are asked, and 7-8 get no rule to pick.
	for n, rules := range map[int]bool{6: true, 7: false, 8: false} {
		an.choose = func(a approvalAsked) any {
			if got := ruleAction(a, "exact") != nil; got != rules {
				t.Errorf("turn %d (%q): rule actions offered %v, want %v", n, commands[n], got, rules)
			}
			return deny
		}
		before := an.count()
		if c := e.runTurn(n); c.Status != "failed" || an.count() != before+1 {
			t.Errorf("turn %d (%q): bash %s after %d questions, want failed after one", n, commands[n], c.Status, an.count()-before)
		}
	}
	for _, f := range []string{"pwned", "pwned2", "../outside.txt"} {
		if _, err := os.Stat(filepath.Join(e.folder, f)); err == nil {
			t.Errorf("%s exists: a denied command ran", f)
		}
	}

	var st struct {
		AllowCommands []cmdrules.Rule `json:"allowCommands"`
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil {
		t.Fatal(err)
	}
	want := []cmdrules.Rule{{Exact: "echo hello"}, {Prefix: "ls"}}
	if fmt.Sprint(st.AllowCommands) != fmt.Sprint(want) {
		t.Errorf("loom.status allowCommands = %v, want %v", st.AllowCommands, want)
	}
	// The rules are the user's, kept outside the repository.
	entries, _ := os.ReadDir(e.folder)
	for _, en := range entries {
		t.Errorf("the workspace holds %s: rules must live in the user's state directory", en.Name())
	}
}

func hasDetail(t *testing.T, msgs []fakeeditor.Message, detail string) bool {
	for _, c := range toolCalls(t, msgs, "bash") {
		if strings.Contains(c.Summary, detail) || strings.Contains(c.Progress, detail) {
			return true
		}
	}
	return false
}

// A client that declares no window capability and is not known to
// answer window/showMessageRequest (Vim's ALE, which never answers) is
// asked once with a short wait; the turn does not hang, the user is told
// plainly once, the command is not run, and the client is not asked
// again in that session.
func TestApprovalClientNeverAnswers(t *testing.T) {
	e := newEnv(t, envOptions{
		script:    bashScript("touch ran", "touch ran2"),
		cfg:       fakeeditor.Config{NoShowMessage: true, ClientName: "ALE"},
		options:   map[string]any{"tools": map[string]any{"bash": "ask"}},
		firstWait: 300 * time.Millisecond,
	})
	e.ask("run 0.")
	e.await("the turn ended with the model's answer", hasMethod("window/showMessage", "done 0"))
	if n := len(e.ed.Messages("window/showMessageRequest")); n != 1 {
		t.Errorf("%d window/showMessageRequest sent, want 1 (a first short wait)", n)
	}
	e.await("the request is cancelled", hasMethod("$/cancelRequest", `"id"`))
	e.await("the user is told plainly", hasMethod("window/showMessage", "got no answer within 300ms, so it will not ask again in this session"))
	e.await("and how to allow commands", hasMethod("window/showMessage", `set tools.bash = \"allow\"`))
	e.await("a refused command is a warning, not an error", hasMethod("window/showMessage", `{"type":2,"message":"Loom (`))
	for _, m := range e.ed.Messages("window/showMessage") {
		if strings.Contains(string(m.Params), "did not run") && strings.Contains(string(m.Params), `"type":1`) {
			t.Errorf("a refused command shown as an error: %s", m.Params)
		}
	}
	e.ask("run 1.")
	e.await("the second turn ended", hasMethod("window/showMessage", "done 1"))
	if n := len(e.ed.Messages("window/showMessageRequest")); n != 1 {
		t.Errorf("%d window/showMessageRequest sent, want still 1: a client that never answered is not asked again", n)
	}
	told := 0
	for _, m := range e.ed.Messages("window/showMessage") {
		if strings.Contains(string(m.Params), "will not ask again") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("told %d times that the editor is not asked again, want once", told)
	}
	for _, f := range []string{"ran", "ran2"} {
		if _, err := os.Stat(filepath.Join(e.folder, f)); err == nil {
			t.Errorf("the command making %s ran", f)
		}
	}
}

// eglot and lsp-mode answer window/showMessageRequest without declaring
// window.showMessage: known by clientInfo.name, they are asked and waited
// for; an unknown client that answers the first question in time is
// asked like them afterwards.
func TestApprovalAskedByClientName(t *testing.T) {
	// A known client's user takes longer than the first wait to answer:
	// it is waited for. An unknown one answers the first question in time.
	// A client with no clientInfo that answered another request
	// (workspace/configuration, as eglot 1.9 does) is waited for too.
	for name, think := range map[string]time.Duration{"Eglot": 300 * time.Millisecond, "emacs": 300 * time.Millisecond, "Neovim": 300 * time.Millisecond,
		"some-new-editor": 0, "answers-configuration": 300 * time.Millisecond} {
		t.Run(name, func(t *testing.T) {
			cfg := fakeeditor.Config{NoShowMessage: true, AnswersAnyway: true, ClientName: name}
			if name == "answers-configuration" {
				cfg.Settings = map[string]any{}
			}
			e := newEnv(t, envOptions{
				script:    bashScript("touch ran", "touch ran2"),
				cfg:       cfg,
				options:   map[string]any{"tools": map[string]any{"bash": "ask"}},
				firstWait: 100 * time.Millisecond,
				hooks: fakeeditor.Hooks{ShowMessageRequest: func(p *protocol.ShowMessageRequestParams) *protocol.MessageActionItem {
					time.Sleep(think) // the user reads the question
					return &p.Actions[0]
				}},
			})
			for i, f := range []string{"ran", "ran2"} {
				e.ask(fmt.Sprintf("run %d.", i))
				e.await("the answer", hasMethod("window/showMessage", fmt.Sprintf("done %d", i)))
				if _, err := os.Stat(filepath.Join(e.folder, f)); err != nil {
					t.Errorf("run %d: the approved command did not run: %v", i, err)
				}
			}
			if n := len(e.ed.Messages("window/showMessageRequest")); n != 2 {
				t.Errorf("%d window/showMessageRequest, want 2", n)
			}
			if think > askNudge {
				// A client that reads a request only with more output
				// (eglot 1.9) gets a log line while the question waits.
				e.await("a log line while the question waits", hasMethod("window/logMessage", "Loom is waiting for your answer: Loom (001) wants to run bash:"))
			}
		})
	}
}

// An approval nobody answers is denied after tools.approval_timeout, said
// plainly, and the request is cancelled.
func TestApprovalTimeout(t *testing.T) {
	release := make(chan struct{})
	e := newEnv(t, envOptions{
		script:  bashScript("touch ran"),
		cfg:     loomClient,
		options: map[string]any{"tools": map[string]any{"bash": "ask", "approval_timeout": "300ms"}},
		hooks: fakeeditor.Hooks{RawShowMessageRequest: func(json.RawMessage) any {
			<-release // the user walked away, until the test ends
			return nil
		}},
	})
	defer close(release)
	c := e.runTurn(0)
	if c.Status != "failed" {
		t.Fatalf("bash %s, want failed", c.Status)
	}
	e.await("the denial is said", hasMethod("window/showMessage", "no answer within 300ms (tools.approval_timeout)"))
	e.await("the request is cancelled", hasMethod("$/cancelRequest", `"id"`))
	if _, err := os.Stat(filepath.Join(e.folder, "ran")); err == nil {
		t.Error("the command ran")
	}
}

func TestRuleCommands(t *testing.T) {
	e := newEnv(t, envOptions{cfg: loomClient})
	var res RulesResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, RuleArgs{Prefix: "go  test"}, &res); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, RuleArgs{Exact: "npm test"}, &res); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.AllowCommands) != fmt.Sprint([]cmdrules.Rule{{Prefix: "go test"}, {Exact: "npm test"}}) {
		t.Errorf("rules %v", res.AllowCommands)
	}
	for _, bad := range []RuleArgs{{Prefix: "sh -c"}, {Exact: "go test $(id)"}, {}, {Exact: "a", Prefix: "b"}, {Prefix: "go test; rm -rf ~"}} {
		if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, bad, nil); err == nil {
			t.Errorf("loom.addRule %+v accepted", bad)
		}
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdRemoveRule, RuleArgs{Prefix: "go test"}, &res); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdRemoveRule, RuleArgs{Prefix: "go test"}, nil); err == nil {
		t.Error("removing a missing rule succeeded")
	}
	res = RulesResult{}
	if err := e.ed.ExecuteCommand(e.ctx, CmdRules, FolderArgs{}, &res); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.AllowCommands) != fmt.Sprint([]cmdrules.Rule{{Exact: "npm test"}}) {
		t.Errorf("rules after removal %v", res.AllowCommands)
	}
}

// "Always allow every command" (loom.addRule {every}) is the user's rule:
// afterwards any command runs unasked, even one no other rule can match;
// loom.status lists it; removed, commands are asked again. Nothing is
// written in the workspace (a trust-bound setting there would be held
// back in a folder with any other widening value).
func TestEveryCommandRule(t *testing.T) {
	an := &answerer{}
	e := newEnv(t, envOptions{
		script:  bashScript("echo one $(echo two) > out.txt", "touch asked"),
		cfg:     loomClient,
		options: map[string]any{"tools": map[string]any{"bash": "ask"}},
		hooks:   fakeeditor.Hooks{RawShowMessageRequest: an.hook},
	})
	var res RulesResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, RuleArgs{Every: true}, &res); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.AllowCommands) != fmt.Sprint([]cmdrules.Rule{{Every: true}}) {
		t.Errorf("rules %v", res.AllowCommands)
	}
	an.choose = func(approvalAsked) any {
		t.Error("asked under the every-command rule")
		return map[string]any{"title": approveDeny}
	}
	if c := e.runTurn(0); c.Status != "succeeded" || an.count() != 0 {
		t.Fatalf("turn 0: bash %s after %d approvals, want succeeded unasked", c.Status, an.count())
	}
	if !hasDetail(t, e.ed.Messages(MethodToolCall), "allowed by the rule every command") {
		t.Errorf("no tool call says the every-command rule allowed it")
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdRemoveRule, RuleArgs{Every: true}, &res); err != nil {
		t.Fatal(err)
	}
	an.choose = func(approvalAsked) any { return map[string]any{"title": approveDeny} }
	if c := e.runTurn(1); c.Status != "failed" || an.count() != 1 {
		t.Fatalf("turn 1: bash %s after %d approvals, want failed after one question", c.Status, an.count())
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, RuleArgs{Every: true, Prefix: "go"}, nil); err == nil {
		t.Error("loom.addRule {every, prefix} accepted")
	}
	entries, _ := os.ReadDir(e.folder)
	for _, en := range entries {
		if en.Name() != "out.txt" {
			t.Errorf("the workspace holds %s", en.Name())
		}
	}
}
