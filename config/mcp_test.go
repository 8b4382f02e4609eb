package config

import (
	"strings"
	"testing"
	"time"
)

func TestMCPServers(t *testing.T) {
	isolate(t)
	user := write(t, t.TempDir(), "loom.toml", `
[mcp.servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_TOKEN = "MY_GITHUB_TOKEN" }
approve = "allow"
timeout = "30s"

[mcp.servers.docs]
url = "http://localhost:8931/mcp"
`)
	folder := t.TempDir()
	write(t, folder, ".loom.toml", `
[mcp.servers.docs]
approve = "deny"

[mcp.servers.local]
command = "./server.sh"
`)
	// Untrusted, the folder's servers and its keys of the user's are left
	// out (TrustNotice says so).
	c, _, err := Load(LoadOptions{ExplicitFile: user, Folder: folder, TrustFile: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.MCP.Servers["local"]; ok || c.MCP.Servers["docs"].Policy() != PolicyAsk || c.MCP.Servers["docs"].FromWorkspace() {
		t.Errorf("untrusted: servers = %+v", c.MCP.Servers)
	}
	if ig := strings.Join(c.IgnoredKeys(), ","); ig != "mcp.servers.docs.approve,mcp.servers.local.command" {
		t.Errorf("ignored = %s", ig)
	}
	c, _, err = Load(LoadOptions{ExplicitFile: user, Folder: folder, Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	gh := c.MCP.Servers["github"]
	if gh.Command != "npx" || len(gh.Args) != 2 || gh.Args[1] != "@modelcontextprotocol/server-github" ||
		gh.Env["GITHUB_TOKEN"] != "MY_GITHUB_TOKEN" || gh.Policy() != PolicyAllow || gh.CallTimeout() != 30*time.Second {
		t.Errorf("github = %+v", gh)
	}
	if gh.FromWorkspace() {
		t.Error("github comes from the user file only, but FromWorkspace is set")
	}
	docs := c.MCP.Servers["docs"]
	if docs.URL != "http://localhost:8931/mcp" || docs.Policy() != PolicyDeny || !docs.FromWorkspace() {
		t.Errorf("docs = %+v (fromWorkspace %v): want the user's url, the workspace's policy, from workspace", docs, docs.FromWorkspace())
	}
	local := c.MCP.Servers["local"]
	if !local.FromWorkspace() || local.Policy() != PolicyAsk || local.CallTimeout() != DefaultMCPTimeout {
		t.Errorf("local = %+v: want from workspace, ask, default timeout", local)
	}
}

func TestMCPErrors(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string
	}{
		{"unknown key", "[mcp.servers.a]\ncommand = \"x\"\ncommnd = \"y\"\n", []string{":3: unknown key \"mcp.servers.a.commnd\""}},
		{"args type", "[mcp.servers.a]\ncommand = \"x\"\nargs = \"-y\"\n", []string{":3: mcp.servers.a.args: want an array of strings"}},
		{"args item", "[mcp.servers.a]\ncommand = \"x\"\nargs = [\"a\", 1]\n", []string{":3: mcp.servers.a.args[1]: want a string, got integer 1"}},
		{"server not a table", "[mcp.servers]\na = 1\n", []string{":2: mcp.servers.a: want a table"}},
		{"neither", "[mcp.servers.a]\napprove = \"ask\"\n", []string{"needs command (a stdio server) or url"}},
		{"both", "[mcp.servers.a]\ncommand = \"x\"\nurl = \"http://h/mcp\"\n", []string{":3: mcp.servers.a.url: mcp.servers.a has both command and url"}},
		{"bad policy", "[mcp.servers.a]\ncommand = \"x\"\napprove = \"maybe\"\n", []string{":3: mcp.servers.a.approve: invalid policy \"maybe\""}},
		{"bad url", "[mcp.servers.a]\nurl = \"ftp://h\"\n", []string{":2: mcp.servers.a.url: invalid URL"}},
		{"value in env", "[mcp.servers.a]\ncommand = \"x\"\nenv = { TOKEN = \"sk-abc123-secret\" }\n", []string{":3: mcp.servers.a.env.TOKEN: want the NAME"}},
		{"api key in env", "[mcp.servers.a]\ncommand = \"x\"\nenv = { KEY = \"OPENAI_API_KEY\" }\n", []string{"never passed to an MCP server"}},
		{"bad name", "[mcp.servers.\"a__b\"]\ncommand = \"x\"\n", []string{`invalid server name "a__b"`}},
		{"bad timeout", "[mcp.servers.a]\ncommand = \"x\"\ntimeout = \"0s\"\n", []string{":3: mcp.servers.a.timeout: must be a positive duration"}},
		{"args with url", "[mcp.servers.a]\nurl = \"http://h/mcp\"\nargs = [\"-y\"]\n", []string{":3: mcp.servers.a.args: mcp.servers.a: args, env and set_env apply to a command, not to a url"}},
		{"headers with command", "[mcp.servers.a]\ncommand = \"x\"\nheaders = { X = \"y\" }\n", []string{":3: mcp.servers.a.headers: mcp.servers.a: headers and bearer_token_env apply to a url, not to a command"}},
		{"bearer not a name", "[mcp.servers.a]\nurl = \"http://h/mcp\"\nbearer_token_env = \"sk-secret\"\n", []string{":3: mcp.servers.a.bearer_token_env: want the NAME"}},
		{"client metadata not https", "[mcp.servers.a]\nurl = \"http://h/mcp\"\noauth_client_metadata_url = \"http://me.example/loom.json\"\n", []string{":3: mcp.servers.a.oauth_client_metadata_url: want an https URL with a path"}},
		{"client metadata at the root", "[mcp.servers.a]\nurl = \"http://h/mcp\"\noauth_client_metadata_url = \"https://me.example/\"\n", []string{"want an https URL with a path"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			path := write(t, t.TempDir(), "loom.toml", tc.text)
			_, _, err := Load(LoadOptions{ExplicitFile: path})
			if err == nil {
				t.Fatalf("no error for\n%s", tc.text)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q repeats the value", err)
			}
		})
	}
}

func TestMCPOverrideJSON(t *testing.T) {
	isolate(t)
	c, _, err := Load(LoadOptions{Folder: t.TempDir(), Overrides: []Override{{Name: "initializationOptions",
		JSON: []byte(`{"mcp":{"servers":{"fs":{"command":"mcp-fs","args":["/tmp"],"approve":"allow"}}}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	fs := c.MCP.Servers["fs"]
	if fs.Command != "mcp-fs" || len(fs.Args) != 1 || fs.Policy() != PolicyAllow || fs.FromWorkspace() {
		t.Errorf("fs = %+v", fs)
	}
}

// The editor remembers "always allow" per MCP server for every folder; a
// folder that does not declare that server takes it for no error, and one
// that does gets the policy.
func TestMCPOverrideApprovalOfAServerNotDeclared(t *testing.T) {
	isolate(t)
	approvals := Override{Name: "workspace/didChangeConfiguration",
		JSON: []byte(`{"mcp":{"servers":{"fs":{"approve":"allow"},"web":{"approve":"deny"}}}}`)}
	c, _, err := Load(LoadOptions{Folder: t.TempDir(), Overrides: []Override{{Name: "initializationOptions",
		JSON: []byte(`{"mcp":{"servers":{"fs":{"command":"mcp-fs"}}}}`)}, approvals}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.MCP.Servers["fs"].Policy(); got != PolicyAllow {
		t.Errorf("fs policy = %q, want allow", got)
	}
	if _, ok := c.MCP.Servers["web"]; ok {
		t.Errorf("web, declared nowhere, became a server: %+v", c.MCP.Servers["web"])
	}
	// A workspace file declaring only approve is still a mistake said.
	dir := t.TempDir()
	write(t, dir, ".loom.toml", "[mcp.servers.web]\napprove = \"allow\"\n")
	if _, _, err := Load(LoadOptions{Folder: dir, Trusted: true}); err == nil || !strings.Contains(err.Error(), "needs command") {
		t.Errorf("a file's lone approve: err = %v, want needs command", err)
	}
}
