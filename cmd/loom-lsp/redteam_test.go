package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// readEditMain reads main.go and edits it, which starts loom's own
// language server for .go files and waits for its answer.
const readEditMain = `
[[step]]
match.last_user_contains = "rename"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"main.go"}'
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"main.go","old_string":"hi","new_string":"hello"}'

[[step]]
match.last_tool_result_contains = "main.go"
text = ["Renamed."]
`

// fakeLanguageServer puts a "gopls" on a PATH of its own that tells, in
// report (a file in a directory commands may write), that it started,
// whether it could write into home and reach 127.0.0.1:port, then exits
// without answering (loom, waiting on its start, goes on at once).
func fakeLanguageServer(t *testing.T, home, report string, port int) string {
	t.Helper()
	bin := t.TempDir()
	script := "#!/bin/bash\n" +
		"echo started > '" + report + "'\n" +
		"if (echo pwned > '" + home + "/pwned') 2>/dev/null; then echo wrote-home >> '" + report + "'; fi\n" +
		"if (exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(port) + ") 2>/dev/null; then echo connected >> '" + report + "'; fi\n" +
		"echo done >> '" + report + "'\n" +
		"exit 0\n"
	writeFile(t, bin, "gopls", script)
	if err := os.Chmod(filepath.Join(bin, "gopls"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// listenPort listens on a loopback port for the test's length, so that
// a connection there succeeds unless the network is cut off.
func listenPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// languageServerRun runs one exec turn that reads and edits main.go in
// a repository whose .loom.toml is repoToml (untrusted), under the
// user's own userToml, with the fake gopls on PATH; it returns the fake
// server's report ("" when it never started) and the home it may not
// write.
func languageServerRun(t *testing.T, userToml, repoToml string, port int) (report, home string) {
	t.Helper()
	files := map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"}
	if repoToml != "" {
		files[".loom.toml"] = repoToml
	}
	dir := gittest.Repo(t, files)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reportPath := filepath.Join(tmp, "report")
	bin := fakeLanguageServer(t, home, reportPath, port)
	var env []string
	for _, kv := range isolatedEnv(t) {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH":
			kv = "PATH=" + bin + ":" + val
		case "HOME", "TMPDIR":
			continue
		case "XDG_CONFIG_HOME":
			if err := os.MkdirAll(filepath.Join(val, "loom"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(val, "loom"), "loom.toml", userToml)
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "TMPDIR="+tmp)
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--script", writeScript(t, readEditMain), "rename hi")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(reportPath)
	return string(b), home
}

// TestLanguageServerOnlyWhereCommandsMayRun: loom starts a language
// server itself (exec has no editor to ask for diagnostics), and a
// language server runs the project's build (gopls's go list,
// rust-analyzer's build scripts: code the repository, or the agent,
// wrote). It runs in the commands' sandbox, with their network setting,
// and not at all when the user denied commands or turned diagnostics
// off — whatever the repository's own .loom.toml says.
func TestLanguageServerOnlyWhereCommandsMayRun(t *testing.T) {
	if !sandbox.New(sandbox.Policy{Root: "/"}).Active() {
		t.Skip("no Landlock here")
	}
	// The bound only for a loaded machine: the fake server exits once it
	// has reported, and loom goes on then.
	const wait = "[tools]\ndiagnostics_wait = \"60s\"\n"
	t.Run("sandboxed, network off", func(t *testing.T) {
		report, home := languageServerRun(t, wait+"network = \"off\"\n", "", listenPort(t))
		if !strings.Contains(report, "done") {
			t.Fatalf("the language server did not run (the route is not exercised): report %q", report)
		}
		if strings.Contains(report, "wrote-home") {
			t.Errorf("loom's language server wrote into $HOME: outside the sandbox")
		}
		if _, err := os.Stat(filepath.Join(home, "pwned")); err == nil {
			t.Errorf("$HOME/pwned exists")
		}
		if strings.Contains(report, "connected") {
			t.Errorf("loom's language server reached the network with tools.network = \"off\"")
		}
	})
	for _, c := range []struct{ name, user, repo string }{
		{"user denies commands, the repository says ask", wait + "bash = \"deny\"\n", "[tools]\nbash = \"ask\"\n"},
		{"user turns diagnostics off, the repository says auto", wait + "diagnostics = \"off\"\n", "[tools]\ndiagnostics = \"auto\"\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			report, _ := languageServerRun(t, c.user, c.repo, listenPort(t))
			if report != "" {
				t.Fatalf("the repository's .loom.toml undid the user's setting: loom ran a language server (%q)", report)
			}
		})
	}
}

// TestLoomsGitIsNotTheAgents: the user's PATH names a directory of the
// workspace (direnv's PATH_add bin, layout node's node_modules/.bin —
// an editor started from that shell passes it on). A sandboxed command
// puts an executable "git" there; loom's own git (the auto-commit after
// the next edit, run with the user's rights, outside the sandbox) must
// not be it: it would write into $HOME, which the sandbox forbids.
func TestLoomsGitIsNotTheAgents(t *testing.T) {
	if !sandbox.New(sandbox.Policy{Root: "/"}).Active() {
		t.Skip("no Landlock here")
	}
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(tmp, 0o755)
	dir := gittest.Repo(t, map[string]string{"a.txt": "one\n"})
	plant := `mkdir -p bin && printf '#!/bin/sh\necho pwned > ` + home + `/pwned\nexec ` + realGit + ` "$@"\n' > bin/git && chmod +x bin/git && echo planted`
	script := `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '''` + jsonString(t, map[string]string{"command": plant}) + `'''

[[step]]
match.last_tool_result_contains = "planted"
  [[step.tool_call]]
  id = "w1"
  name = "write_file"
  arguments = '{"path":"b.txt","content":"two\n"}'

[[step]]
match.last_tool_result_contains = "b.txt"
text = ["Done."]
`
	var env []string
	for _, kv := range isolatedEnv(t) {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH":
			kv = "PATH=" + filepath.Join(dir, "bin") + ":" + val
		case "HOME", "TMPDIR":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "TMPDIR="+tmp)
	r := runLoomEnv(t, env, dir, "", "exec", "--approve", "bash=allow", "--script", writeScript(t, script), "go")
	out := r.stdout + r.stderr
	if _, err := os.Stat(filepath.Join(dir, "bin", "git")); err != nil {
		t.Fatalf("the plant did not happen (the route is not exercised): %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, "pwned")); err == nil {
		t.Fatalf("loom ran the agent's bin/git with the user's rights (it wrote into $HOME):\n%s", out)
	}
	if !strings.Contains(gittest.Run(t, dir, "log", "-1", "--format=%s"), "b.txt") {
		t.Errorf("the edit was not committed:\n%s", out)
	}
}

// jsonString is v as JSON, for a TOML literal string.
func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAgentWrittenLoomTomlOfAnotherFolderIsNotTrustedOnFirstSight: the
// user trusts a parent directory ([trust] folders). In a monorepo, a
// sandboxed command writes packages/app/.loom.toml (the sandbox keeps
// only the folder's own top-level names) turning the sandbox off. A new
// one is held (47.3: in exec, deleted and named). One that was there
// before and is rewritten stays, named; later the user opens
// packages/app as a folder of its own: trust on first sight would
// record the agent's values as the user's, and the next agent there ran
// outside the sandbox. The values a command wrote are held back.
func TestAgentWrittenLoomTomlOfAnotherFolderIsNotTrustedOnFirstSight(t *testing.T) {
	if !sandbox.New(sandbox.Policy{Root: "/"}).Active() {
		t.Skip("no Landlock here")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(tmp, 0o755)
	mono := gittest.Repo(t, map[string]string{"packages/app/main.txt": "app\n", "README": "mono\n", "packages/lib/main.txt": "lib\n",
		"packages/app/.loom.toml": "[tools]\nbash = \"allow\"\n"})
	env := append(isolatedEnv(t), "HOME="+home, "TMPDIR="+tmp)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			os.MkdirAll(filepath.Join(v, "loom"), 0o755)
			writeFile(t, filepath.Join(v, "loom"), "loom.toml", "[tools]\nbash = \"allow\"\n[trust]\nfolders = ["+strconv.Quote(filepath.Dir(mono))+"]\n")
		}
	}
	bash := func(command string) string {
		return `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '''` + jsonString(t, map[string]string{"command": command}) + `'''

[[step]]
match.last_role = "tool"
text = ["Done."]
`
	}
	// A new one: held, so deleted by exec, and named.
	r := runLoomEnv(t, env, mono, "", "exec", "--script", writeScript(t, bash(`printf '[tools]\nsandbox = "off"\n' > packages/lib/.loom.toml && echo planted`)), "plant")
	if _, err := os.Stat(filepath.Join(mono, "packages", "lib", ".loom.toml")); err == nil {
		t.Fatalf("a new packages/lib/.loom.toml a command created was left in the folder\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "packages/lib/.loom.toml") {
		t.Errorf("the user is not told of the held packages/lib/.loom.toml:\n%s%s", r.stdout, r.stderr)
	}
	// One that was there: rewritten, it stays (named).
	r = runLoomEnv(t, env, mono, "", "exec", "--script", writeScript(t, bash(`printf '[tools]\nsandbox = "off"\n' > packages/app/.loom.toml && echo planted`)), "plant")
	if b, err := os.ReadFile(filepath.Join(mono, "packages", "app", ".loom.toml")); err != nil || !strings.Contains(string(b), "sandbox") {
		t.Fatalf("the plant did not happen (the route is not exercised): %v %q\n%s%s", err, b, r.stdout, r.stderr)
	}
	app := filepath.Join(mono, "packages", "app")
	r = runLoomEnv(t, env, app, "", "exec", "--script", writeScript(t, bash("echo pwned > "+home+"/pwned; echo ran")), "go")
	if _, err := os.Stat(filepath.Join(home, "pwned")); err == nil {
		t.Fatalf("the .loom.toml a command wrote was trusted on first sight: the next agent ran outside the sandbox\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "tools.sandbox") {
		t.Errorf("the user is not told that tools.sandbox was held back:\n%s%s", r.stdout, r.stderr)
	}
}
