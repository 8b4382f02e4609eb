package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/loom-lsp/loom-lsp/jsonrpc/headless"
)

// jsonlSession is a scripted session touching every kind of event: a
// retry, a message, a command that fails and one that runs long enough to
// report progress (slow, the second command), a read, an edit (diff and
// commit), a final message.
func jsonlSession(slow string) string {
	return `
[[step]]
match.last_user_contains = "again"
text = ["Second turn."]
[[step]]
match.last_user_contains = "world"
error = { status = 429, retry_after = "10ms", message = "slow down" }

[[step]]
match.last_user_contains = "world"
text = ["Let me ", "run the test."]
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"echo FAIL; exit 3"}'

[[step]]
match.last_tool_result_contains = "exit code 3"
text = ["Waiting for the slow part."]
  [[step.tool_call]]
  id = "b2"
  name = "bash"
  arguments = '{"command":"` + slow + `"}'

[[step]]
match.last_tool_result_contains = "slow done"` + readEditGreet + `text = ["Done: ", "greet.txt greets the world."]
usage = { prompt = 100, completion = 7 }
`
}

// eventSchema is the published JSON Schema of the JSONL events.
func eventSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(headless.Schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return s
}

// validEvents checks that every line of stdout is a JSON event valid
// against the schema, and returns them.
func validEvents(t *testing.T, schema *jsonschema.Schema, stdout string) []map[string]any {
	t.Helper()
	var events []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.Bytes()))
		if err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("event %s does not match the schema: %v", sc.Text(), err)
		}
		var ev map[string]any
		json.Unmarshal(sc.Bytes(), &ev)
		events = append(events, ev)
	}
	return events
}

func ofType(events []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, ev := range events {
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

// sequence is the event types in order, runs of one type collapsed and
// tool_progress left out (it depends on timing).
func sequence(events []map[string]any) string {
	var types []string
	for _, ev := range events {
		typ := ev["type"].(string)
		if typ != "tool_progress" && (len(types) == 0 || types[len(types)-1] != typ) {
			types = append(types, typ)
		}
	}
	return strings.Join(types, " ")
}

// progressLines are the output lines a tool_progress of a bash call may
// show: none yet, or one its command printed (masked).
var progressLines = map[string][]string{"b1": {"FAIL"}, "b2": {"compiling", "token=[REDACTED]"}}

// releasedOnProgress returns a command that prints two lines and then
// waits until the test saw a tool_progress event of call b2 showing the
// second one (with a 60 s deadline), and the function that watches
// loom's stdout for it.
func releasedOnProgress(t *testing.T) (command string, watch func(line string)) {
	release := filepath.Join(t.TempDir(), "release")
	var once sync.Once
	open := func() {
		once.Do(func() {
			if err := os.WriteFile(release, nil, 0o644); err != nil {
				t.Error(err)
			}
		})
	}
	timer := time.AfterFunc(60*time.Second, open) // the test then fails: no progress seen
	t.Cleanup(func() { timer.Stop() })
	command = "echo compiling; cat token.txt; until [ -e " + release + " ]; do sleep 0.05; done; echo slow done"
	return command, func(line string) {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && ev["type"] == "tool_progress" && ev["id"] == "b2" && ev["output_line"] == "token=[REDACTED]" {
			open()
		}
	}
}

func TestExecJSONLMatchesSchemaAndCarriesResults(t *testing.T) {
	schema := eventSchema(t)
	slow, watch := releasedOnProgress(t)
	dir, env, script := testRepo(t), isolatedEnv(t), writeScript(t, jsonlSession(slow))
	// A key in the environment is a secret: the command prints it (from a
	// file, since bash's environment has no *_API_KEY), and it must show
	// masked, in the progress line and in the output alike.
	const key = "sk-progress-0123456789abcdef"
	env = append(env, "FOO_API_KEY="+key)
	if err := os.WriteFile(filepath.Join(dir, "token.txt"), []byte("token="+key+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runLoomLines(t, env, dir, "", watch, "exec", "--output", "jsonl", "--approve", "bash=allow", "--script", script, "greet the world")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, key) {
		t.Errorf("stdout shows the key:\n%s", r.stdout)
	}
	events := validEvents(t, schema, r.stdout)
	want := "session_started turn_started retry_scheduled message_delta message_completed tool_started tool_completed " +
		"message_delta message_completed tool_started tool_completed tool_started tool_completed tool_started tool_completed " +
		"commit message_delta message_completed turn_completed"
	if got := sequence(events); got != want {
		t.Fatalf("event sequence\n got: %s\nwant: %s\nstdout:\n%s", got, want, r.stdout)
	}
	started := ofType(events, "session_started")[0]
	sessionID := started["session_id"]
	if started["resumed"] != false || started["folder"] == "" || ofType(events, "turn_started")[0]["session_id"] != sessionID {
		t.Errorf("session_started %v, turn_started %v", started, ofType(events, "turn_started")[0])
	}
	messages := ofType(events, "message_completed")
	if len(messages) != 3 || messages[0]["text"] != "Let me run the test." || messages[2]["text"] != "Done: greet.txt greets the world." {
		t.Errorf("message_completed events %v", messages)
	}
	for _, d := range ofType(events, "message_delta") {
		if d["id"] != messages[0]["id"] && d["id"] != messages[1]["id"] && d["id"] != messages[2]["id"] {
			t.Errorf("delta %v belongs to no completed message", d)
		}
	}
	tools := ofType(events, "tool_completed")
	if b1 := tools[0]; b1["exit_code"] != 3.0 || !strings.Contains(b1["output"].(string), "FAIL") {
		t.Errorf("bash result %v: want exit_code 3 and its output", b1)
	}
	if r1 := tools[2]; r1["exit_code"] != nil || !strings.Contains(r1["output"].(string), "hello") {
		t.Errorf("read_file result %v", r1)
	}
	if e1 := tools[3]; !strings.Contains(e1["diff"].(string), "+hello, world") {
		t.Errorf("edit result %v", e1)
	}
	if args := ofType(events, "tool_started")[0]["args"]; !reflect.DeepEqual(args, map[string]any{"command": "echo FAIL; exit 3"}) {
		t.Errorf("tool_started args %#v, want the arguments as an object", args)
	}
	if b2 := tools[1]; !strings.Contains(b2["output"].(string), "token=[REDACTED]\nslow done") {
		t.Errorf("bash result %v: want its output, the key masked", b2)
	}
	checkProgress(t, ofType(events, "tool_started"), ofType(events, "tool_progress"), r.stdout)

	// --resume continues the conversation: same id, the next turn number,
	// and nothing about the earlier conversation before turn_started.
	gitT(t, dir, "reset", "-q", "--hard", "HEAD~1")
	r = runLoomEnv(t, env, dir, "", "exec", "--resume", "--output", "jsonl", "--no-deltas", "--script", script, "once again")
	if r.code != 0 {
		t.Fatalf("--resume: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events = validEvents(t, schema, r.stdout)
	if got := sequence(events); !strings.HasPrefix(got, "session_started turn_started") || strings.Contains(got, "message_delta") {
		t.Fatalf("--resume --no-deltas sequence: %s\n%s", got, r.stdout)
	}
	if ev := events[0]; ev["session_id"] != sessionID || ev["resumed"] != true {
		t.Errorf("--resume session_started %v, want session_id %v, resumed", ev, sessionID)
	}
	if turn := ofType(events, "turn_started")[0]["turn"]; turn != 2.0 {
		t.Errorf("resumed turn is %v, want 2", turn)
	}
	if m := ofType(events, "message_completed"); len(m) != 1 || m[0]["text"] != "Second turn." {
		t.Errorf("message_completed %v", m)
	}

	// A new conversation gets a new id.
	r = runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--script", script, "greet the world")
	if events = validEvents(t, schema, r.stdout); events[0]["session_id"] == sessionID || events[0]["resumed"] != false {
		t.Errorf("a new conversation's session_started %v", events[0])
	}
}

// checkProgress checks the tool_progress events: any call that ran over a
// second may report (under load even the quick ones), each as itself; the
// slow b2 reported its latest output line, masked.
func checkProgress(t *testing.T, started, progress []map[string]any, stdout string) {
	t.Helper()
	calls := map[any]map[string]any{}
	for _, s := range started {
		calls[s["id"]] = s
	}
	withLine := 0
	for _, p := range progress {
		call := calls[p["id"]]
		if call == nil || p["name"] != call["name"] || p["elapsed_ms"].(float64) < 1000 {
			t.Errorf("tool_progress %v: want a started call's, after a second", p)
			continue
		}
		if call["name"] != "bash" {
			continue
		}
		if cmd := call["args"].(map[string]any)["command"].(string); p["message"] != "running "+clip80(cmd) {
			t.Errorf("tool_progress %v: want the message running %s", p, cmd)
		}
		if p["output_line"] == nil {
			continue
		}
		if !slices.Contains(progressLines[p["id"].(string)], p["output_line"].(string)) {
			t.Errorf("tool_progress output_line %q, want a line its command printed, masked", p["output_line"])
		}
		if p["id"] == "b2" && p["output_line"] == "token=[REDACTED]" {
			withLine++
		}
	}
	if withLine == 0 {
		t.Errorf("no tool_progress of b2 carried the command's latest output line:\n%s", stdout)
	}
}

// clip80 is a command as tool_progress shows it: 80 bytes at most.
func clip80(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Failures before the turn print one JSON error event in JSONL mode (and
// the same exit codes).
func TestExecJSONLFailureBeforeTheTurn(t *testing.T) {
	schema := eventSchema(t)
	dir := testRepo(t)
	broken := testRepo(t)
	os.WriteFile(filepath.Join(broken, ".loom.toml"), []byte("[model]\nnmae = \"x\"\n"), 0o644)
	for _, tc := range []struct {
		name string
		dir  string
		args []string
		code int
		kind string
	}{
		{"no prompt", dir, []string{"exec", "--output", "jsonl"}, 2, "usage"},
		{"bad flag", dir, []string{"exec", "--output=jsonl", "--frobnicate", "hi"}, 2, "usage"},
		{"bad approve", dir, []string{"exec", "--output", "jsonl", "--approve", "rm=allow", "hi"}, 2, "usage"},
		{"no model", dir, []string{"exec", "--output", "jsonl", "hi"}, 3, "config"},
		{"broken config", broken, []string{"exec", "--output", "jsonl", "--script", writeScript(t, jsonlSession("echo slow done")), "hi"}, 3, "config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runLoom(t, tc.dir, "", tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			events := validEvents(t, schema, r.stdout)
			if len(events) != 1 || events[0]["type"] != "error" || events[0]["kind"] != tc.kind || events[0]["message"] == "" {
				t.Fatalf("stdout %q: want one error event of kind %s", r.stdout, tc.kind)
			}
			if r.stderr == "" {
				t.Errorf("nothing on stderr for people")
			}
		})
	}
}
