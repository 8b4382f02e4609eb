package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// peerEntry is one server entry of a peer's file, as written.
type peerEntry struct {
	name   string
	line   int
	value  map[string]any
	inputs map[string]string // VS Code's inputs: id → description
}

// skipQuietly is the reason of a server its own file turns off.
const skipQuietly = "\x00off"

// mapCtx is what mapping a server needs to know.
type mapCtx struct {
	folder, home string
	inputs       map[string]string
}

// jsonEntries reads the servers of a JSON file of Claude Code, Cursor or
// VS Code.
func jsonEntries(f PeerFile, data []byte) ([]peerEntry, string) {
	if f.format == formatVSCode || f.format == formatGemini {
		data = stripJSONC(data)
	}
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		if n := jsonErrLine(data, err); n > 0 {
			return nil, fmt.Sprintf("line %d: invalid JSON: %v", n, err)
		}
		return nil, "invalid JSON: " + err.Error()
	}
	path := []string{"mcpServers"}
	switch f.format {
	case formatVSCode:
		path = []string{"servers"}
	case formatClaudeLocal:
		projects, _ := top["projects"].(map[string]any)
		proj, _ := projects[f.project].(map[string]any)
		if proj == nil {
			return nil, ""
		}
		top = proj
		path = []string{"projects", f.project, "mcpServers"}
	}
	servers, ok := top[path[len(path)-1]].(map[string]any)
	if !ok {
		return nil, ""
	}
	if f.format == formatGemini {
		servers = geminiFilter(top, servers)
	}
	inputs := map[string]string{}
	if list, ok := top["inputs"].([]any); ok && f.format == formatVSCode {
		for _, in := range list {
			m, _ := in.(map[string]any)
			id, _ := m["id"].(string)
			desc, _ := m["description"].(string)
			if id != "" {
				inputs[id] = desc
			}
		}
	}
	lines := memberLines(data, path...)
	var out []peerEntry
	for _, name := range sortedNames(servers) {
		v, _ := servers[name].(map[string]any)
		if v == nil {
			v = map[string]any{"\x00bad": servers[name]}
		}
		out = append(out, peerEntry{name: name, line: lines[name], value: v, inputs: inputs})
	}
	slices.SortStableFunc(out, func(a, b peerEntry) int { return a.line - b.line })
	return out, ""
}

// codexEntries reads the [mcp_servers] of a Codex config.toml.
func codexEntries(data []byte) ([]peerEntry, string) {
	var top map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&top); err != nil {
		var pe toml.ParseError
		if ok := asParseErr(err, &pe); ok {
			return nil, fmt.Sprintf("line %d: invalid TOML: %s", parseErrLine(data, pe.Position), pe.Message)
		}
		return nil, "invalid TOML: " + err.Error()
	}
	servers, ok := top["mcp_servers"].(map[string]any)
	if !ok {
		return nil, ""
	}
	lines := keyLines(string(data))
	var out []peerEntry
	for _, name := range sortedNames(servers) {
		v, _ := servers[name].(map[string]any)
		if v == nil {
			v = map[string]any{"\x00bad": servers[name]}
		}
		out = append(out, peerEntry{name: name, line: lookupLine(lines, []string{"mcp_servers", name}), value: v})
	}
	return out, ""
}

func asParseErr(err error, pe *toml.ParseError) bool {
	p, ok := err.(toml.ParseError)
	if ok {
		*pe = p
	}
	return ok
}

var (
	// templateRE matches ${NAME}, ${NAME:-default}, ${env:NAME} and
	// ${input:id} and the editors' other variables.
	templateRE = regexp.MustCompile(`\$\{([^}]*)\}`)
)

// normalize rewrites the variables of a peer's value the way loom expands
// them when the server starts (${NAME}, ${NAME:-default}): ${env:NAME}
// becomes ${NAME}, ${workspaceFolder} and ${userHome} the paths. It fails
// on ${input:…} (VS Code asks the user; loom cannot) and on other
// variables of the editors.
func (m mapCtx) normalize(s string) (string, string) {
	var why string
	out := templateRE.ReplaceAllStringFunc(s, func(t string) string {
		inner := t[2 : len(t)-1]
		switch {
		case inner == "workspaceFolder" && m.folder != "":
			return m.folder
		case inner == "userHome" && m.home != "":
			return m.home
		case strings.HasPrefix(inner, "env:"):
			return "${" + strings.TrimPrefix(inner, "env:") + "}"
		case strings.HasPrefix(inner, "input:"):
			id := strings.TrimPrefix(inner, "input:")
			desc := m.inputs[id]
			if desc != "" {
				desc = " (" + desc + ")"
			}
			why = fmt.Sprintf("it uses %s%s, which VS Code asks you for and loom cannot: pass it from an environment variable in loom.toml instead (env = { NAME = \"VARIABLE\" }, or bearer_token_env for a url server)", t, desc)
		default:
			name, _, _ := strings.Cut(inner, ":-")
			if !envNameRE.MatchString(name) && why == "" {
				why = fmt.Sprintf("it uses %s, which loom does not know", t)
			}
		}
		return t
	})
	return out, why
}

// passedVariable returns NAME when s is exactly ${NAME}: a variable
// passed whole, as loom's env does.
func passedVariable(s string) string {
	if m := templateRE.FindStringSubmatch(s); m != nil && m[0] == s && envNameRE.MatchString(m[1]) {
		return m[1]
	}
	return ""
}

// mapJSONServer maps a Claude Code, Cursor or VS Code server entry to
// loom's keys, or says why not.
func mapJSONServer(v map[string]any, m mapCtx) (map[string]any, string) {
	if _, bad := v["\x00bad"]; bad {
		return nil, "its entry is not an object"
	}
	if d, _ := v["disabled"].(bool); d {
		return nil, skipQuietly
	}
	r := &entryReader{v: v, m: m}
	switch typ, _ := v["type"].(string); typ {
	case "", "stdio", "local":
		if v["command"] == nil && v["url"] != nil {
			return mapURL(v, m, r.str)
		}
		return r.mapStdio(), r.why
	case "http", "streamable-http", "streamableHttp", "remote":
		return mapURL(v, m, r.str)
	case "sse":
		return nil, "its transport is SSE (deprecated in MCP); loom speaks streamable HTTP: use the server's streamable HTTP URL"
	default:
		return nil, fmt.Sprintf("its type %q is not one loom knows (stdio, http)", typ)
	}
}

// entryReader reads a server entry's values, normalized, keeping the
// first problem found (why).
type entryReader struct {
	v   map[string]any
	m   mapCtx
	why string
}

// note keeps w when it is the first problem.
func (r *entryReader) note(w string) {
	if r.why == "" {
		r.why = w
	}
}

// str is the string at key, normalized.
func (r *entryReader) str(key string) string {
	s, ok := r.v[key].(string)
	if !ok && r.v[key] != nil {
		r.note(fmt.Sprintf("%s is not a string", key))
	}
	if r.why == "" {
		s, r.why = r.m.normalize(s)
	}
	return s
}

// mapStdio maps a stdio server: its command, args and env (envFile is
// not read).
func (r *entryReader) mapStdio() map[string]any {
	raw := map[string]any{}
	cmd := r.str("command")
	if cmd == "" {
		r.note("it has no command")
	}
	raw["command"] = cmd
	if args, ok := r.v["args"].([]any); ok {
		list := make([]any, 0, len(args))
		for _, a := range args {
			s, ok := a.(string)
			if !ok {
				s = fmt.Sprint(a)
			}
			s, w := r.m.normalize(s)
			r.note(w)
			list = append(list, s)
		}
		raw["args"] = list
	}
	if env, ok := r.v["env"].(map[string]any); ok && len(env) > 0 {
		r.note(mapEnv(env, r.m, raw))
	}
	if f, ok := r.v["envFile"].(string); ok && f != "" {
		r.note("it reads envFile, which loom does not: pass the variables with env in loom.toml instead")
	}
	return raw
}

// mapURL maps a remote server.
func mapURL(v map[string]any, m mapCtx, str func(string) string) (map[string]any, string) {
	raw := map[string]any{"url": str("url")}
	if raw["url"] == "" {
		return nil, "it has no url"
	}
	if h, ok := v["headers"].(map[string]any); ok && len(h) > 0 {
		headers := map[string]any{}
		for _, k := range sortedNames(h) {
			s, _ := h[k].(string)
			s, why := m.normalize(s)
			if why != "" {
				return nil, why
			}
			if strings.EqualFold(k, "Authorization") {
				if tok, ok := strings.CutPrefix(s, "Bearer "); ok && passedVariable(tok) != "" {
					raw["bearer_token_env"] = passedVariable(tok)
					continue
				}
			}
			headers[k] = s
		}
		if len(headers) > 0 {
			raw["headers"] = headers
		}
	}
	if u := raw["url"].(string); !strings.Contains(u, "${") {
		if err := checkURL(u); err != nil {
			return nil, err.Error()
		}
	}
	return raw, ""
}

// mapEnv maps a server's env: a value that is exactly ${NAME} passes the
// variable (loom's env); any other value is set (set_env).
func mapEnv(env map[string]any, m mapCtx, raw map[string]any) string {
	pass, set := map[string]any{}, map[string]any{}
	for _, k := range sortedNames(env) {
		s, ok := env[k].(string)
		if !ok {
			s = fmt.Sprint(env[k])
		}
		s, why := m.normalize(s)
		if why != "" {
			return why
		}
		if name := passedVariable(s); name != "" {
			pass[k] = name
		} else {
			set[k] = s
		}
	}
	if len(pass) > 0 {
		raw["env"] = pass
	}
	if len(set) > 0 {
		raw["set_env"] = set
	}
	return ""
}

// mapCodexServer maps a Codex [mcp_servers.NAME] table to loom's keys.
func mapCodexServer(v map[string]any, m mapCtx) (map[string]any, string) {
	if _, bad := v["\x00bad"]; bad {
		return nil, "its entry is not a table"
	}
	if on, ok := v["enabled"].(bool); ok && !on {
		return nil, skipQuietly
	}
	var raw map[string]any
	if u, ok := v["url"].(string); ok {
		raw = mapCodexURL(v, u)
	} else {
		var why string
		if raw, why = mapCodexCommand(v); why != "" {
			return nil, why
		}
	}
	if t, ok := toFloat(v["tool_timeout_sec"]); ok && t > 0 {
		raw["timeout"] = fmt.Sprintf("%gs", t)
	}
	return raw, ""
}

// mapCodexURL maps a Codex remote server at url: its bearer token's
// variable and its headers (env_http_headers' values are variables).
func mapCodexURL(v map[string]any, url string) map[string]any {
	raw := map[string]any{"url": url}
	if e, ok := v["bearer_token_env_var"].(string); ok {
		raw["bearer_token_env"] = e
	}
	headers := map[string]any{}
	if h, ok := v["http_headers"].(map[string]any); ok {
		for k, val := range h {
			headers[k] = fmt.Sprint(val)
		}
	}
	if h, ok := v["env_http_headers"].(map[string]any); ok {
		for k, val := range h {
			headers[k] = "${" + fmt.Sprint(val) + "}"
		}
	}
	if len(headers) > 0 {
		raw["headers"] = headers
	}
	return raw
}

// mapCodexCommand maps a Codex stdio server: its command and args, env
// (values set) and env_vars (variables passed); cwd is refused.
func mapCodexCommand(v map[string]any) (map[string]any, string) {
	cmd, _ := v["command"].(string)
	if cmd == "" {
		return nil, "it has neither command nor url"
	}
	raw := map[string]any{"command": cmd}
	if args, ok := v["args"].([]any); ok {
		raw["args"] = args
	}
	set := map[string]any{}
	if env, ok := v["env"].(map[string]any); ok {
		for k, val := range env {
			set[k] = fmt.Sprint(val)
		}
	}
	if len(set) > 0 {
		raw["set_env"] = set
	}
	if names, ok := v["env_vars"].([]any); ok {
		pass := map[string]any{}
		for _, n := range names {
			if s, ok := n.(string); ok {
				pass[s] = s
			}
		}
		raw["env"] = pass
	}
	if cwd, ok := v["cwd"].(string); ok && cwd != "" {
		return nil, "it sets cwd, and loom starts a server in the workspace folder: define it in loom.toml without cwd"
	}
	return raw, ""
}
