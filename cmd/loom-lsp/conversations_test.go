package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// pacedScript answers "slow" prompts with text paced over about two
// seconds, and any other prompt at once, echoing nothing of it.
const pacedScript = `
[[step]]
match.last_user_contains = "slow"
repeat = true
pace = "100ms"
text = ["s1 ", "s2 ", "s3 ", "s4 ", "s5 ", "s6 ", "s7 ", "s8 ", "s9 ", "s10 ", "s11 ", "s12 ", "s13 ", "s14 ", "s15 ", "s16 ", "s17 ", "s18 ", "s19 ", "s20"]

[[step]]
repeat = true
text = ["quick answer"]
`

type listed struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Turns     int    `json:"turns"`
	Elsewhere bool   `json:"open_elsewhere"`
}

func listOf(t *testing.T, env []string, dir string) []listed {
	t.Helper()
	r := runLoomEnv(t, env, dir, "", "exec", "--list", "--output", "jsonl")
	if r.code != 0 {
		t.Fatalf("--list: exit %d\n%s", r.code, r.stderr)
	}
	var out []listed
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var l listed
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("--list line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// Two loom-lsp processes (the built binary) on one folder: while one runs
// a long turn, the other lists its conversation as open elsewhere, runs
// and journals its own, and resumes an older conversation; afterwards
// every conversation is listed with all its turns, and each can be
// resumed by id.
func TestTwoProcessesOnOneFolder(t *testing.T) {
	dir, env := testRepo(t), isolatedEnv(t)
	script := writeScript(t, pacedScript)
	if r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "an older question"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	older := listOf(t, env, dir)
	if len(older) != 1 || older[0].Title != "an older question" {
		t.Fatalf("after one run: %+v", older)
	}

	slow := exec.Command(loomBinary, "exec", "--script", script, "a slow question")
	slow.Dir, slow.Env = dir, env
	var slowOut, slowErr bytes.Buffer
	slow.Stdout, slow.Stderr = &slowOut, &slowErr
	if err := slow.Start(); err != nil {
		t.Fatal(err)
	}
	defer slow.Process.Kill()
	var running listed
	for deadline := time.Now().Add(20 * time.Second); running.ID == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the slow run's conversation was never listed as open elsewhere: %+v", listOf(t, env, dir))
		}
		for _, l := range listOf(t, env, dir) {
			if l.Elsewhere && l.Title == "a slow question" {
				running = l
			}
		}
	}
	// Meanwhile: this process resumes the older conversation, and may not
	// take the running one.
	if r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "--resume="+older[0].ID, "a follow-up"); r.code != 0 {
		t.Fatalf("resuming the older conversation while the other runs: exit %d\n%s", r.code, r.stderr)
	}
	if r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "--conversation", running.ID, "steal it"); r.code == 0 || !strings.Contains(r.stderr, "another loom process") {
		t.Fatalf("continuing a conversation open in another process: exit %d\n%s", r.code, r.stderr)
	}
	if err := slow.Wait(); err != nil {
		t.Fatalf("the slow run: %v\n%s", err, slowErr.String())
	}
	if !strings.Contains(slowOut.String(), "s20") {
		t.Fatalf("the slow run lost its answer:\n%s", slowOut.String())
	}
	all := listOf(t, env, dir)
	turns := map[string]int{}
	for _, l := range all {
		turns[l.Title] = l.Turns
		if l.Elsewhere {
			t.Errorf("%s still open elsewhere after both ended", l.ID)
		}
	}
	if turns["an older question"] != 2 || turns["a slow question"] != 1 || len(all) != 2 {
		t.Fatalf("conversations after both runs: %+v", all)
	}
	r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "--resume", running.ID, "and the slow one again")
	if r.code != 0 {
		t.Fatalf("resuming the slow run's conversation: exit %d\n%s", r.code, r.stderr)
	}
	for _, l := range listOf(t, env, dir) {
		if l.ID == running.ID && l.Turns != 2 {
			t.Fatalf("the resumed conversation has %d turns, want 2", l.Turns)
		}
	}
	table := runLoomEnv(t, env, dir, "", "exec", "--list")
	if !strings.Contains(table.stdout, "TITLE") || !strings.Contains(table.stdout, "a slow question") {
		t.Fatalf("--list table:\n%s", table.stdout)
	}
}

// loom-lsp acp logs only warnings and errors on stderr by default (ACP
// clients such as acp.el show every stderr line as an error); --log-level
// info brings the chatter back.
func TestACPStderrIsQuietByDefault(t *testing.T) {
	dir, env := testRepo(t), isolatedEnv(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"
	quiet := runLoomEnv(t, env, dir, init, "acp")
	if quiet.code != 0 || strings.Contains(quiet.stderr, "level=INFO") {
		t.Fatalf("default: exit %d, stderr:\n%s", quiet.code, quiet.stderr)
	}
	chatty := runLoomEnv(t, env, dir, init, "acp", "--log-level", "info")
	if chatty.code != 0 || !strings.Contains(chatty.stderr, "level=INFO") {
		t.Fatalf("--log-level info: exit %d, stderr:\n%s", chatty.code, chatty.stderr)
	}
}
