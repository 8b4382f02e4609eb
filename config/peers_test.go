package config

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The peers' files below are their published examples: Claude Code's
// "Environment variable expansion in .mcp.json" (code.claude.com/docs/en/mcp),
// VS Code's MCP configuration reference (inputs, a stdio and an http
// server), Cursor's mcp.json and Codex's [mcp_servers] (docs/config.md).

const claudeProjectExample = `{
  "mcpServers": {
    "shared-server": {
      "command": "/path/to/server",
      "args": [],
      "env": {}
    },
    "api-server": {
      "type": "http",
      "url": "${API_BASE_URL:-https://api.example.com}/mcp",
      "headers": {
        "Authorization": "Bearer ${API_KEY}"
      }
    }
  }
}
`

const vscodeExample = `{
  // 💡 Inputs are prompted on first server start, then stored securely by VS Code.
  "inputs": [
    {
      "type": "promptString",
      "id": "perplexity-key",
      "description": "Perplexity API Key",
      "password": true
    }
  ],
  "servers": {
    // https://github.com/ppl-ai/modelcontextprotocol/
    "Perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": {
        "PERPLEXITY_API_KEY": "${input:perplexity-key}"
      }
    },
    "fetch": {
      "type": "stdio",
      "command": "uvx",
      "args": ["mcp-server-fetch", "--root", "${workspaceFolder}"],
    },
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/"
    },
  }
}
`

const cursorExample = `{
  "mcpServers": {
    "server-name": {
      "command": "npx",
      "args": ["-y", "mcp-server"],
      "env": {
        "API_KEY": "value",
        "TOKEN": "${env:MY_TOKEN}"
      }
    },
    "fetch": {
      "command": "python3",
      "args": ["-m", "mcp_server_fetch"]
    }
  }
}
`

const codexExample = `# Codex: MCP servers
[mcp_servers.server-name]
command = "npx"
args = ["-y", "mcp-server"]
env = { "API_KEY" = "value" }

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }
tool_timeout_sec = 90

[mcp_servers.off]
command = "never"
enabled = false
`

// peerFolder writes the four repository files and a home with Claude
// Code's user file (a user server and a local-scope server of folder).
func peerFolder(t *testing.T) (folder, home string) {
	t.Helper()
	xdg := isolate(t)
	folder, _ = filepath.EvalSymlinks(t.TempDir())
	home = filepath.Join(xdg, "home")
	write(t, folder, ".mcp.json", claudeProjectExample)
	write(t, folder, ".vscode/mcp.json", vscodeExample)
	write(t, folder, ".cursor/mcp.json", cursorExample)
	write(t, folder, ".codex/config.toml", codexExample)
	write(t, home, ".claude.json", `{
  "numStartups": 12,
  "mcpServers": {
    "my-notes": {"command": "notes-mcp"},
    "fetch": {"command": "user-fetch"}
  },
  "projects": {
    "`+folder+`": {
      "mcpServers": {
        "local-db": {"type": "stdio", "command": "db-mcp", "args": ["--ro"]}
      }
    }
  }
}
`)
	return folder, home
}

func TestPeerFilesPublishedExamples(t *testing.T) {
	folder, home := peerFolder(t)
	c, sources, err := Load(LoadOptions{Folder: folder, Trusted: true, TrustFile: filepath.Join(t.TempDir(), "trust")})
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(maps.Keys(c.MCP.Servers))
	want := []string{"Perplexity", "api-server", "fetch", "figma", "github", "local-db", "my-notes", "server-name", "shared-server"}
	want = slices.DeleteFunc(want, func(n string) bool { return n == "Perplexity" }) // needs a VS Code input
	if !slices.Equal(got, want) {
		t.Fatalf("servers = %v, want %v", got, want)
	}
	srv := c.MCP.Servers
	checks := []struct {
		name      string
		got, want any
	}{
		{"shared-server", srv["shared-server"].Command, "/path/to/server"},
		{"shared-server from", srv["shared-server"].File(), filepath.Join(folder, ".mcp.json")},
		{"shared-server is the repository's", srv["shared-server"].FromWorkspace(), true},
		{"api-server url", srv["api-server"].URL, "${API_BASE_URL:-https://api.example.com}/mcp"},
		{"api-server bearer", srv["api-server"].BearerTokenEnv, "API_KEY"},
		// fetch: .vscode/mcp.json comes before .cursor/mcp.json and ~/.claude.json.
		{"fetch from VS Code", srv["fetch"].Command, "uvx"},
		{"fetch args", srv["fetch"].Args, []string{"mcp-server-fetch", "--root", folder}},
		{"github url", srv["github"].URL, "https://api.githubcopilot.com/mcp/"},
		// server-name: Cursor's before Codex's.
		{"server-name from Cursor", srv["server-name"].File(), filepath.Join(folder, ".cursor", "mcp.json")},
		{"server-name set_env", srv["server-name"].SetEnv, map[string]string{"API_KEY": "value"}},
		{"server-name env passes", srv["server-name"].Env, map[string]string{"TOKEN": "MY_TOKEN"}},
		{"figma bearer", srv["figma"].BearerTokenEnv, "FIGMA_OAUTH_TOKEN"},
		{"figma headers", srv["figma"].Headers, map[string]string{"X-Figma-Region": "us-east-1"}},
		{"figma timeout", srv["figma"].CallTimeout().String(), "1m30s"},
		{"local-db (Claude local scope)", srv["local-db"].Args, []string{"--ro"}},
		{"local-db is the user's", srv["local-db"].FromWorkspace(), false},
		{"my-notes (Claude user scope)", srv["my-notes"].Command, "notes-mcp"},
		{"my-notes is the user's", srv["my-notes"].FromWorkspace(), false},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	notes := strings.Join(c.MCPNotes(), "\n")
	for _, w := range []string{
		filepath.Join(folder, ".vscode", "mcp.json") + `:13: MCP server "Perplexity" not used: it uses ${input:perplexity-key} (Perplexity API Key), which VS Code asks you for`,
		filepath.Join(folder, ".cursor", "mcp.json") + `:11: MCP server "fetch" not used: ` + filepath.Join(folder, ".vscode", "mcp.json") + `:21 defines it too`,
		filepath.Join(folder, ".codex", "config.toml") + `:2: MCP server "server-name" not used: ` + filepath.Join(folder, ".cursor", "mcp.json") + `:3 defines it too`,
		filepath.Join(home, ".claude.json") + `:5: MCP server "fetch" is replaced by the repository's`,
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	if strings.Contains(notes, `"off"`) {
		t.Errorf("a server its file turns off is noted: %s", notes)
	}
	var names []string
	for _, s := range sources {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, filepath.Join(folder, ".mcp.json")) || !slices.Contains(names, filepath.Join(home, ".claude.json")) {
		t.Errorf("sources = %v", names)
	}
}

// A repository's peer files are bound to trust like its .loom.toml; the
// user's own apply anyway; loom's own definition of a name wins whole.
func TestPeerFilesTrustAndPrecedence(t *testing.T) {
	folder, _ := peerFolder(t)
	trust := filepath.Join(t.TempDir(), "trust")
	c, _, err := Load(LoadOptions{Folder: folder, TrustFile: trust})
	if err != nil {
		t.Fatal(err)
	}
	if c.Trusted() {
		t.Fatal("an unlisted folder is trusted")
	}
	for _, n := range []string{"shared-server", "github", "figma", "server-name"} {
		if _, ok := c.MCP.Servers[n]; ok {
			t.Errorf("untrusted folder: the repository's server %q was taken", n)
		}
	}
	if c.MCP.Servers["my-notes"].Command != "notes-mcp" || c.MCP.Servers["local-db"].Command != "db-mcp" {
		t.Errorf("the user's own servers are missing: %v", slices.Sorted(maps.Keys(c.MCP.Servers)))
	}
	// The user file's fetch is taken, the repository's being held.
	if c.MCP.Servers["fetch"].Command != "user-fetch" {
		t.Errorf("fetch = %+v, want the user's", c.MCP.Servers["fetch"])
	}
	notice := c.TrustNotice("")
	if !strings.Contains(notice, ".mcp.json") || !strings.Contains(notice, "mcp.servers.github.url") {
		t.Errorf("notice = %q, want it to name the held servers and their files", notice)
	}

	// Trusted, then the repository's .mcp.json changes (a git pull, a
	// command): its servers are held until the user confirms again.
	if err := TrustFolder(trust, folder, ""); err != nil {
		t.Fatal(err)
	}
	c, _, err = Load(LoadOptions{Folder: folder, TrustFile: trust})
	if err != nil || !c.Trusted() || c.MCP.Servers["github"].URL == "" {
		t.Fatalf("trusted: err %v, trusted %v, servers %v", err, c.Trusted(), slices.Sorted(maps.Keys(c.MCP.Servers)))
	}
	write(t, folder, ".mcp.json", strings.Replace(claudeProjectExample, "/path/to/server", "/tmp/evil", 1))
	c, _, err = Load(LoadOptions{Folder: folder, TrustFile: trust})
	if err != nil {
		t.Fatal(err)
	}
	if c.Trusted() || c.MCP.Servers["shared-server"].Command != "" {
		t.Errorf("after .mcp.json changed: trusted %v, shared-server %+v", c.Trusted(), c.MCP.Servers["shared-server"])
	}
	if n := c.TrustNotice(""); !strings.Contains(n, "changed") {
		t.Errorf("notice = %q", n)
	}

	// loom's own definition wins whole; its approve applies to a peer's.
	write(t, folder, ".mcp.json", claudeProjectExample)
	user := write(t, filepath.Dir(filepath.Dir(trust)), "user.toml", `
[mcp.servers.github]
url = "https://example.com/mine"
[mcp.servers.figma]
approve = "allow"
`)
	c, _, err = Load(LoadOptions{Folder: folder, TrustFile: trust, UserFile: user, Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	if g := c.MCP.Servers["github"]; g.URL != "https://example.com/mine" || g.File() != "" {
		t.Errorf("github = %+v, want loom's own", g)
	}
	if f := c.MCP.Servers["figma"]; f.URL != "https://mcp.figma.com/mcp" || f.Policy() != PolicyAllow {
		t.Errorf("figma = %+v, want Codex's with loom's approve", f)
	}
}

func TestPeerFilesProblemsAreNotes(t *testing.T) {
	isolate(t)
	folder := t.TempDir()
	write(t, folder, ".vscode/mcp.json", "{\n  \"servers\": {\n    \"a\": { \"command\": \"x\" }\n    \"b\": {}\n  }\n}\n")
	write(t, folder, ".mcp.json", `{"mcpServers": {
  "leak": {"command": "srv", "env": {"K": "${OPENAI_API_KEY}"}},
  "old": {"type": "sse", "url": "https://example.com/sse"},
  "my server.v2": {"command": "ok"}
}}`)
	c, _, err := Load(LoadOptions{Folder: folder, Trusted: true, TrustFile: filepath.Join(t.TempDir(), "t")})
	if err != nil {
		t.Fatalf("a peer's broken file broke loom's config: %v", err)
	}
	notes := strings.Join(c.MCPNotes(), "\n")
	for _, w := range []string{
		filepath.Join(folder, ".vscode", "mcp.json") + ": line 4: invalid JSON",
		`"leak" not used: its env.K reads OPENAI_API_KEY, the model's API key`,
		`.mcp.json:3: MCP server "old" not used: its transport is SSE`,
		`.mcp.json:4: MCP server "my server.v2" is named "my-server-v2" in loom`,
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	if _, ok := c.MCP.Servers["leak"]; ok {
		t.Error("a server reading the model's key was taken")
	}
	if c.MCP.Servers["my-server-v2"].Command != "ok" {
		t.Errorf("servers = %v", slices.Sorted(maps.Keys(c.MCP.Servers)))
	}
}

func TestMCPServerResolve(t *testing.T) {
	env := map[string]string{"API_KEY": "k-123", "ROOT": "/srv"}
	getenv := func(k string) string { return env[k] }
	s := MCPServer{URL: "${API_BASE_URL:-https://api.example.com}/mcp", BearerTokenEnv: "API_KEY", Headers: map[string]string{"X-Root": "${ROOT}/x"}}
	r, err := s.Resolve(getenv)
	if err != nil || r.URL != "https://api.example.com/mcp" || r.Headers["Authorization"] != "Bearer k-123" || r.Headers["X-Root"] != "/srv/x" {
		t.Errorf("Resolve = %+v, %v", r, err)
	}
	s = MCPServer{Command: "srv", Args: []string{"--db=${DB_URL}"}, SetEnv: map[string]string{"MODE": "ro", "HOME_DIR": "${ROOT}"}}
	r, err = s.Resolve(getenv)
	if err == nil || !strings.Contains(err.Error(), "DB_URL") {
		t.Errorf("an unset variable: err %v", err)
	}
	if !slices.Equal(r.SetEnv, []string{"HOME_DIR=/srv", "MODE=ro"}) {
		t.Errorf("set_env = %v", r.SetEnv)
	}
	if _, err := os.Stat("/"); err != nil {
		t.Skip()
	}
}

func TestStripJSONC(t *testing.T) {
	in := "{\n // c \"x\"\n \"a\": \"b // not a comment\", /* c\n */ \"l\": [1, 2,],\n}\n"
	out := stripJSONC([]byte(in))
	if strings.Count(string(out), "\n") != strings.Count(in, "\n") {
		t.Errorf("lines changed: %q", out)
	}
	if !strings.Contains(string(out), `"b // not a comment"`) || strings.Contains(string(out), "2,]") {
		t.Errorf("stripJSONC = %q", out)
	}
}
