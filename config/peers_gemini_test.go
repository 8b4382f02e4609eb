package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Gemini CLI's examples, byte for byte from its docs/tools/mcp-server.md
// (google-gemini/gemini-cli).
const (
	geminiHeadersExample = `{
  "mcpServers": {
    "httpServerWithAuth": {
      "httpUrl": "http://localhost:3000/mcp",
      "headers": {
        "Authorization": "Bearer your-api-token",
        "X-Custom-Header": "custom-value",
        "Content-Type": "application/json"
      },
      "timeout": 5000
    }
  }
}
`
	geminiDockerExample = `{
  "mcpServers": {
    "dockerizedServer": {
      "command": "docker",
      "args": [
        "run",
        "-i",
        "--rm",
        "-e",
        "API_KEY",
        "-v",
        "${PWD}:/workspace",
        "my-mcp-server:latest"
      ],
      "env": {
        "API_KEY": "$EXTERNAL_SERVICE_TOKEN"
      }
    }
  }
}
`
	geminiFilteringExample = `{
  "mcpServers": {
    "filteredServer": {
      "command": "python",
      "args": ["-m", "my_mcp_server"],
      "includeTools": ["safe_tool", "file_reader", "data_processor"],
      // "excludeTools": ["dangerous_tool", "file_deleter"],
      "timeout": 30000
    }
  }
}
`
	geminiPythonExample = `{
  "mcpServers": {
    "pythonTools": {
      "command": "python",
      "args": ["-m", "my_mcp_server", "--port", "8080"],
      "cwd": "./mcp-servers/python",
      "env": {
        "DATABASE_URL": "$DB_CONNECTION_STRING",
        "API_KEY": "${EXTERNAL_API_KEY}"
      },
      "timeout": 15000
    }
  }
}
`
)

// Gemini CLI's settings.json, the repository's and the user's, read from
// its published examples: httpUrl (streamable HTTP) with its headers and
// timeout; $VAR and ${VAR} passed as variables; comments; what loom
// cannot do (includeTools, cwd, SSE url) is a note naming file:line.
// trust (no confirmation) counts from the user's own file only: the
// repository's is ignored; and the repository's file waits for the
// folder's trust like any other.
func TestPeerFilesGemini(t *testing.T) {
	folder, home := peerFolder(t)
	write(t, folder, ".gemini/settings.json", geminiHeadersExample)
	write(t, home, ".gemini/settings.json", geminiDockerExample)
	c, _, err := Load(LoadOptions{Folder: folder, Trusted: true, TrustFile: filepath.Join(t.TempDir(), "trust")})
	if err != nil {
		t.Fatal(err)
	}
	h, d := c.MCP.Servers["httpServerWithAuth"], c.MCP.Servers["dockerizedServer"]
	for _, ch := range []struct {
		name      string
		got, want any
	}{
		{"http url", h.URL, "http://localhost:3000/mcp"},
		{"http headers", h.Headers, map[string]string{"Authorization": "Bearer your-api-token", "X-Custom-Header": "custom-value", "Content-Type": "application/json"}},
		{"http timeout", h.CallTimeout().String(), "5s"},
		{"http is the repository's", h.FromWorkspace(), true},
		{"docker args", d.Args, []string{"run", "-i", "--rm", "-e", "API_KEY", "-v", "${PWD}:/workspace", "my-mcp-server:latest"}},
		{"docker env passes", d.Env, map[string]string{"API_KEY": "EXTERNAL_SERVICE_TOKEN"}},
		{"docker is the user's", d.FromWorkspace(), false},
		{"docker from", d.File(), filepath.Join(home, ".gemini", "settings.json")},
	} {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}

	folder2, home2 := peerFolder(t)
	write(t, folder2, ".gemini/settings.json", geminiFilteringExample)
	write(t, home2, ".gemini/settings.json", geminiPythonExample)
	c, _, err = Load(LoadOptions{Folder: folder2, Trusted: true, TrustFile: filepath.Join(t.TempDir(), "trust")})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(c.MCPNotes(), "\n")
	for _, w := range []string{
		filepath.Join(folder2, ".gemini", "settings.json") + `:3: MCP server "filteredServer" not used: it sets includeTools, which loom cannot apply`,
		filepath.Join(home2, ".gemini", "settings.json") + `:3: MCP server "pythonTools" not used: it sets cwd`,
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	if _, ok := c.MCP.Servers["filteredServer"]; ok {
		t.Error("a server with includeTools is offered whole")
	}

	// trust: the user's own file gives it; the repository's does not.
	folder3, home3 := peerFolder(t)
	write(t, folder3, ".gemini/settings.json", `{"mcpServers": {"repoTrusting": {"command": "node", "args": ["s.js"], "trust": true},
  "sse": {"url": "http://localhost:8080/sse"}}}`)
	write(t, home3, ".gemini/settings.json", `{"mcp": {"excluded": ["off"]}, "mcpServers": {"mine": {"command": "mine-mcp", "trust": true}, "off": {"command": "x"}}}`)
	c, _, err = Load(LoadOptions{Folder: folder3, Trusted: true, TrustFile: filepath.Join(t.TempDir(), "trust")})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.MCP.Servers["repoTrusting"].Policy(); p != PolicyAsk {
		t.Errorf("the repository's trust: true gave policy %q", p)
	}
	if p := c.MCP.Servers["mine"].Policy(); p != PolicyAllow {
		t.Errorf("the user's trust: true gave policy %q, want allow", p)
	}
	if _, ok := c.MCP.Servers["off"]; ok {
		t.Error("mcp.excluded's server is offered")
	}
	if notes := strings.Join(c.MCPNotes(), "\n"); !strings.Contains(notes, `MCP server "sse" not used: its url is an SSE endpoint`) {
		t.Errorf("no SSE note:\n%s", notes)
	}
	c, _, err = Load(LoadOptions{Folder: folder3, Trusted: false, TrustFile: filepath.Join(t.TempDir(), "trust")})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.MCP.Servers["repoTrusting"]; ok {
		t.Error("an untrusted folder's .gemini/settings.json server is used")
	}
	if !IsProtected(filepath.Join(folder3, ".gemini", "settings.json")) {
		t.Error(".gemini/settings.json is not a protected name")
	}
}
