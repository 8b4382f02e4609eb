package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// DefaultMCPTimeout is the per-call timeout of an MCP tool when
// [MCPServer.Timeout] is not set.
const DefaultMCPTimeout = 2 * time.Minute

// MCP configures the Model Context Protocol servers whose tools the agent
// may call.
type MCP struct {
	// Servers are the MCP servers, by name. A name is made of letters,
	// digits, '-' and '_' (no "__"): the model sees each tool as
	// "<name>__<tool>".
	Servers map[string]MCPServer `toml:"servers"`
	// StartupTimeout is how long `loom-lsp exec` and an ACP prompt wait
	// for servers still starting before they go on without them; unset
	// means [DefaultMCPStartupTimeout] (10s). The LSP daemon never waits.
	StartupTimeout Duration `toml:"startup_timeout"`
}

// DefaultMCPStartupTimeout is [MCP.StartupTimeout] when unset.
const DefaultMCPStartupTimeout = 10 * time.Second

// WaitTimeout returns StartupTimeout, or its default when unset.
func (m MCP) WaitTimeout() time.Duration {
	if m.StartupTimeout.Duration <= 0 {
		return DefaultMCPStartupTimeout
	}
	return m.StartupTimeout.Duration
}

// MCPServer is one MCP server: a command speaking MCP on its stdio, or
// the URL of a streamable HTTP endpoint (exactly one of the two).
type MCPServer struct {
	// Command is the program to run (looked up in PATH), started in the
	// workspace folder with Args.
	Command string `toml:"command"`
	// Args are the command's arguments.
	Args []string `toml:"args"`
	// Env passes variables of loom's environment to the server: each key
	// is the variable's name in the server's environment, each value the
	// NAME of the variable to read it from, never a value. The server
	// gets nothing else but PATH and HOME.
	Env map[string]string `toml:"env"`
	// URL is a streamable HTTP MCP endpoint, instead of Command.
	URL string `toml:"url"`
	// Approve is the approval policy of the server's tools; unset means
	// PolicyAsk.
	Approve Policy `toml:"approve"`
	// Timeout bounds one tool call; unset means [DefaultMCPTimeout] (2m).
	Timeout Duration `toml:"timeout"`
	// SetEnv sets variables of a command's environment to text, in which
	// ${NAME} and ${NAME:-default} are replaced by loom's environment
	// variables when the server starts (what the peers' files write as
	// env values). Prefer Env for secrets.
	SetEnv map[string]string `toml:"set_env"`
	// Headers are HTTP headers sent to a url server, ${NAME} expanded
	// likewise.
	Headers map[string]string `toml:"headers"`
	// BearerTokenEnv names a variable of loom's environment whose value a
	// url server gets as "Authorization: Bearer <value>".
	BearerTokenEnv string `toml:"bearer_token_env"`
	// OAuthClientID is the OAuth client id registered for loom with a url
	// server's authorization server, for servers that do not register
	// clients dynamically; unset, loom registers itself when signing in.
	OAuthClientID string `toml:"oauth_client_id"`
	// OAuthScopes are the scopes asked for when signing in, instead of
	// those the server advertises.
	OAuthScopes []string `toml:"oauth_scopes"`
	// OAuthClientMetadataURL is the https URL (not the site's root) of a
	// Client ID Metadata Document describing loom (client_name,
	// redirect_uris with http://127.0.0.1/callback, grant_types), which you
	// host: an authorization server that supports such documents takes
	// the URL as loom's client id, with no registration; others fall back
	// to oauth_client_id, then to dynamic registration.
	OAuthClientMetadataURL string `toml:"oauth_client_metadata_url"`

	// fromWorkspace is set when a workspace's own .loom.toml set any of
	// the server's keys: the repository chose what it runs.
	fromWorkspace bool
	// file is the peer's file (.mcp.json, …) it was read from, "" for
	// loom's own.
	file string
}

// File returns the peer's file the server was read from (see
// [PeerFiles]), or "" when loom's own configuration defines it.
func (s MCPServer) File() string { return s.file }

// Policy returns the server's approval policy, PolicyAsk when unset.
func (s MCPServer) Policy() Policy {
	if s.Approve == "" {
		return PolicyAsk
	}
	return s.Approve
}

// CallTimeout returns the per-call timeout, DefaultMCPTimeout when unset.
func (s MCPServer) CallTimeout() time.Duration {
	if s.Timeout.Duration <= 0 {
		return DefaultMCPTimeout
	}
	return s.Timeout.Duration
}

// FromWorkspace reports whether a workspace folder's own config file set
// any key of this server, so that it may start only in a trusted folder.
func (s MCPServer) FromWorkspace() bool { return s.fromWorkspace }

// Equal reports whether two server configurations start the same server
// the same way (a change means a restart).
func (s MCPServer) Equal(o MCPServer) bool {
	return s.Command == o.Command && slices.Equal(s.Args, o.Args) && mapsEqual(s.Env, o.Env) &&
		s.URL == o.URL && s.Approve == o.Approve && s.Timeout == o.Timeout && s.fromWorkspace == o.fromWorkspace &&
		mapsEqual(s.SetEnv, o.SetEnv) && mapsEqual(s.Headers, o.Headers) && s.BearerTokenEnv == o.BearerTokenEnv && s.file == o.file &&
		s.OAuthClientID == o.OAuthClientID && slices.Equal(s.OAuthScopes, o.OAuthScopes) &&
		s.OAuthClientMetadataURL == o.OAuthClientMetadataURL
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

var (
	serverNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// markWorkspaceServers flags the servers that the workspace file at src
// set a key of.
func (c *Config) markWorkspaceServers(src string) {
	for name, s := range c.MCP.Servers {
		prefix := "mcp.servers." + name + "."
		for key, o := range c.origins {
			if o.src == src && strings.HasPrefix(key, prefix) {
				s.fromWorkspace = true
				c.MCP.Servers[name] = s
				break
			}
		}
	}
}

// ValidMCPServerName reports whether name may name an MCP server: up to
// 32 letters, digits, '-' or '_', without "__" (which separates the
// server from the tool in a tool's model name).
func ValidMCPServerName(name string) bool {
	return serverNameRE.MatchString(name) && !strings.Contains(name, "__")
}

// validateMCP checks the [mcp] section, server by server.
func (c Config) validateMCP(add func(*Error)) {
	for _, name := range sortedNames(c.MCP.Servers) {
		c.validateMCPServer(add, name, c.MCP.Servers[name])
	}
}

// mcpKeyAt is the key an error about sub-key sub of server key is
// reported at: sub when a source set it, else the first of the server's
// keys a source set.
func (c Config) mcpKeyAt(key, sub string) string {
	if c.setBy(key + "." + sub) {
		return key + "." + sub
	}
	return firstSetKey(c, key, "command", "url", "args", "env", "set_env", "headers", "bearer_token_env", "approve", "timeout")
}

// validateMCPServer checks one server: its name, how it is reached, its
// policy and timeout, and the variables it is given.
func (c Config) validateMCPServer(add func(*Error), name string, s MCPServer) {
	key := "mcp.servers." + name
	if !ValidMCPServerName(name) {
		add(c.keyErr(c.mcpKeyAt(key, "command"), "invalid server name %q: use up to 32 letters, digits, '-' or '_' (not \"__\")", name))
	}
	c.validateMCPTransport(add, key, s)
	switch s.Approve {
	case "", PolicyAllow, PolicyAsk, PolicyDeny:
	default:
		add(c.keyErr(c.mcpKeyAt(key, "approve"), "invalid policy %q: want %q, %q or %q", s.Approve, PolicyAllow, PolicyAsk, PolicyDeny))
	}
	if c.setBy(key+".timeout") && s.Timeout.Duration <= 0 {
		add(c.keyErr(key+".timeout", "must be a positive duration, got %q", s.Timeout.String()))
	}
	if s.BearerTokenEnv != "" && !envNameRE.MatchString(s.BearerTokenEnv) {
		add(c.keyErr(key+".bearer_token_env", "want the NAME of a variable of loom's environment"))
	}
	if u := s.OAuthClientMetadataURL; u != "" {
		if p, err := url.Parse(u); err != nil || p.Scheme != "https" || p.Host == "" || strings.Trim(p.Path, "/") == "" {
			add(c.keyErr(key+".oauth_client_metadata_url", "want an https URL with a path (a Client ID Metadata Document), got %q", u))
		}
	}
	if v := s.usesVariable(c.Model.APIKeyEnv); v != "" {
		add(c.keyErr(key+"."+v, "%s is the model's API key (model.api_key_env); it is never passed to an MCP server", c.Model.APIKeyEnv))
	}
	c.validateMCPEnv(add, key, s.Env)
}

// validateMCPTransport checks that server key is either a command (a
// stdio server) or a url (a streamable HTTP server), with only the keys
// that apply to it.
func (c Config) validateMCPTransport(add func(*Error), key string, s MCPServer) {
	switch {
	case s.Command == "" && s.URL == "":
		add(c.keyErr(c.mcpKeyAt(key, "command"), "%s needs command (a stdio server) or url (a streamable HTTP server)", key))
	case s.Command != "" && s.URL != "":
		add(c.keyErr(c.mcpKeyAt(key, "url"), "%s has both command and url: choose one", key))
	case s.URL != "":
		if err := checkURL(s.URL); err != nil && !strings.Contains(s.URL, "${") {
			add(c.keyErr(c.mcpKeyAt(key, "url"), "%v", err))
		}
		if len(s.Args) > 0 || len(s.Env) > 0 || len(s.SetEnv) > 0 {
			add(c.keyErr(c.mcpKeyAt(key, "args"), "%s: args, env and set_env apply to a command, not to a url", key))
		}
	}
	if s.Command != "" && (len(s.Headers) > 0 || s.BearerTokenEnv != "") {
		add(c.keyErr(c.mcpKeyAt(key, "headers"), "%s: headers and bearer_token_env apply to a url, not to a command", key))
	}
}

// validateMCPEnv checks a server's env: each entry passes a variable of
// loom's environment by name (never a value), never the model's key.
func (c Config) validateMCPEnv(add func(*Error), key string, env map[string]string) {
	for _, k := range sortedNames(env) {
		v := env[k]
		ek := key + ".env." + k
		switch {
		case !envNameRE.MatchString(k):
			add(c.keyErr(ek, "invalid variable name %q", k))
		case !envNameRE.MatchString(v):
			add(c.keyErr(ek, "want the NAME of a variable of loom's environment to pass, and this is not a variable name (never put a value here)"))
		case v == c.Model.APIKeyEnv:
			add(c.keyErr(ek, "%s is the model's API key (model.api_key_env); it is never passed to an MCP server", v))
		}
	}
}

// firstSetKey returns the first of key's sub-keys that a source set, or
// key itself.
func firstSetKey(c Config, key string, subs ...string) string {
	for _, s := range subs {
		if c.setBy(key + "." + s) {
			return key + "." + s
		}
	}
	return key
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// MCPServerNote explains why a server declared in the workspace file was
// not started, and how to trust the folder.
func MCPServerNote(name, folder string) string {
	return fmt.Sprintf("not started: MCP server %q is declared in the .loom.toml of %s, a folder you have not trusted; "+
		"to trust it, run the command loom.trust, trust the workspace in your editor, or add it to [trust] folders in your own loom.toml", name, folder)
}

// usesVariable names the key of s that reads the variable name ("" when
// none does, or name is ""): its env, bearer_token_env, or a ${name} in
// its command, args, url, set_env or headers.
func (s MCPServer) usesVariable(name string) string {
	if name == "" {
		return ""
	}
	refers := func(t string) bool {
		for _, m := range templateRE.FindAllStringSubmatch(t, -1) {
			if n, _, _ := strings.Cut(m[1], ":-"); n == name {
				return true
			}
		}
		return false
	}
	for _, k := range sortedNames(s.Env) {
		if s.Env[k] == name {
			return "env." + k
		}
	}
	if s.BearerTokenEnv == name {
		return "bearer_token_env"
	}
	if refers(s.Command) {
		return "command"
	}
	if refers(s.URL) {
		return "url"
	}
	for _, a := range s.Args {
		if refers(a) {
			return "args"
		}
	}
	for _, k := range sortedNames(s.SetEnv) {
		if refers(s.SetEnv[k]) {
			return "set_env." + k
		}
	}
	for _, k := range sortedNames(s.Headers) {
		if refers(s.Headers[k]) {
			return "headers." + k
		}
	}
	return ""
}

// ResolvedMCPServer is a server's definition with loom's environment
// variables filled in, to start it.
type ResolvedMCPServer struct {
	Command string
	Args    []string
	URL     string
	// SetEnv are "KEY=value" entries to add to the command's environment.
	SetEnv []string
	// Headers go with every HTTP request to URL; they may hold secrets.
	Headers map[string]string
}

// Resolve fills in ${NAME} and ${NAME:-default} from getenv in the
// command, args, url, set_env and headers, and turns bearer_token_env
// into an Authorization header. A variable without a default that is not
// set is an error naming it: the server is not started.
func (s MCPServer) Resolve(getenv func(string) string) (ResolvedMCPServer, error) {
	var missing []string
	expand := func(t string) string {
		return templateRE.ReplaceAllStringFunc(t, func(m string) string {
			name, def, hasDef := strings.Cut(m[2:len(m)-1], ":-")
			if !envNameRE.MatchString(name) {
				return m
			}
			if v := getenv(name); v != "" {
				return v
			}
			if !hasDef && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return def
		})
	}
	r := ResolvedMCPServer{Command: expand(s.Command), URL: expand(s.URL)}
	for _, a := range s.Args {
		r.Args = append(r.Args, expand(a))
	}
	for _, k := range sortedNames(s.SetEnv) {
		r.SetEnv = append(r.SetEnv, k+"="+expand(s.SetEnv[k]))
	}
	if len(s.Headers) > 0 || s.BearerTokenEnv != "" {
		r.Headers = map[string]string{}
	}
	for _, k := range sortedNames(s.Headers) {
		r.Headers[k] = expand(s.Headers[k])
	}
	if s.BearerTokenEnv != "" {
		if v := getenv(s.BearerTokenEnv); v != "" {
			r.Headers["Authorization"] = "Bearer " + v
		} else {
			missing = append(missing, s.BearerTokenEnv)
		}
	}
	if len(missing) > 0 {
		return r, fmt.Errorf("it needs the environment variable %s, which is not set", strings.Join(missing, ", "))
	}
	return r, nil
}
