package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// `loom-lsp mcp list|login|logout` against the TypeScript SDK's example
// OAuth server: list says "needs sign-in" with the command; login prints
// the URL, which a client follows as the browser would, and signs in;
// list then says connected with the counts; the token is nowhere in the
// output; logout forgets it.
func TestMCPLoginListLogout(t *testing.T) {
	srv := mcptest.StartOAuth(t, true)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	state := filepath.Join(home, "state")
	folder := t.TempDir()
	cfgFile := filepath.Join(home, "loom.toml")
	if err := os.WriteFile(cfgFile, []byte("[mcp.servers.demo]\nurl = \""+srv.URL+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mcpCmd := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := runMCP(append(args, "--config", cfgFile, "--folder", folder, "--state-dir", state), nil, &out, &errb)
		return out.String() + errb.String(), code
	}
	if out, code := mcpCmd("list"); code != 0 || !strings.Contains(out, "demo\tneeds sign-in: loom-lsp mcp login demo") {
		t.Fatalf("mcp list before sign-in = %d %q", code, out)
	}

	// login, with a browser that follows the printed URL.
	pr, pw := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runMCP([]string{"login", "demo", "--config", cfgFile, "--folder", folder, "--state-dir", state}, nil, pw, &errb)
		pw.Close()
	}()
	var printed strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		printed.WriteString(line + "\n")
		if u := strings.TrimSpace(line); strings.HasPrefix(u, "http://") {
			go func() {
				if resp, err := http.Get(u); err == nil {
					resp.Body.Close()
				}
			}()
		}
	}
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(printed.String(), `signed in to "demo": `) {
			t.Fatalf("mcp login = %d\n%s%s", code, printed.String(), errb.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("mcp login did not end\n%s", printed.String())
	}
	out, code := mcpCmd("list")
	if code != 0 || !strings.Contains(out, "demo\tconnected: ") || !strings.Contains(out, "; signed in\n") ||
		!strings.Contains(out, "Sign-ins are kept in "+filepath.Join(state, "mcp-tokens.json")+" (mode 0600)") {
		t.Fatalf("mcp list after sign-in = %d %q", code, out)
	}
	data, err := os.ReadFile(filepath.Join(state, "mcp-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	tok := between(string(data), `"access_token": "`, `"`)
	if tok == "" || strings.Contains(printed.String()+out+errb.String(), tok) {
		t.Errorf("access token %q missing from the store or shown in the output", tok)
	}
	if out, code := mcpCmd("logout", "demo"); code != 0 || !strings.Contains(out, `signed out of "demo"`) {
		t.Errorf("mcp logout = %d %q", code, out)
	}
	if out, _ := mcpCmd("list"); !strings.Contains(out, "needs sign-in") {
		t.Errorf("mcp list after logout = %q", out)
	}
}

func between(s, start, end string) string {
	_, rest, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, end)
	return v
}

// `loom-lsp mcp list` with the real server-everything (your own stdio
// server): what it offers, resource templates included, and how its
// questions are answered.
func TestMCPListOffers(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	cfgFile := filepath.Join(home, "loom.toml")
	if err := os.WriteFile(cfgFile, []byte("[mcp.servers.ev]\ncommand = \""+mcptest.Find(t).Everything+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := runMCP([]string{"list", "--config", cfgFile, "--folder", t.TempDir(), "--state-dir", filepath.Join(home, "state")}, nil, &out, &errb)
	got := out.String()
	if code != 0 || !regexp.MustCompile(`ev\tconnected: \d+ tools, [1-9]\d* prompts, [1-9]\d* resources \(\+[1-9]\d* templates\)\n`).MatchString(got) ||
		strings.Contains(got, "signed in") || !strings.Contains(got, "Questions from servers (elicitation, form and url): answered in your editor; loom-lsp exec declines them") {
		t.Errorf("mcp list = %d %q %q", code, got, errb.String())
	}
}
