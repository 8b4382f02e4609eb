package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

func init() {
	commands["mcp"] = subcommand{summary: "the folder's MCP servers: list (state of each), login NAME, logout NAME", run: runMCP}
}

// loginTimeout bounds the wait for the user's browser.
const loginTimeout = 10 * time.Minute

const mcpUsage = "Usage: loom-lsp mcp list|login NAME|logout NAME [flags]\n\n" +
	"list          connects to each MCP server of the folder (default: the current directory) and says its state:\n" +
	"              connected (with its tools, prompts and resources), needs sign-in, failed and why, not started\n" +
	"login NAME    signs in to HTTP server NAME (OAuth): prints the URL to open in your browser, waits for it to come\n" +
	"              back to a listener on 127.0.0.1, and keeps the token (0600) in loom's state directory\n" +
	"logout NAME   forgets the sign-in of server NAME\n\nFlags:\n"

// runMCP runs `loom-lsp mcp list|login|logout`.
func runMCP(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := newCommandLine("mcp", mcpUsage)
	configFile := c.fs.String("config", "", "config file to use instead of ~/.config/loom/loom.toml")
	folderFlag := c.fs.String("folder", ".", "the workspace folder whose servers to use")
	stateDir := c.fs.String("state-dir", "", "loom's state directory (default $XDG_STATE_HOME/loom)")
	rest, code, done := c.parse(args, stdout, stderr)
	if done {
		return code
	}
	if len(rest) == 0 {
		return c.usageError(stderr, "say list, login NAME or logout NAME")
	}
	verb, names := rest[0], rest[1:]
	if (verb == "list" && len(names) != 0) || (verb != "list" && len(names) != 1) {
		return c.usageError(stderr, "%q takes %s", verb, map[bool]string{true: "no name", false: "one server name"}[verb == "list"])
	}
	folder, err := filepath.Abs(*folderFlag)
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp mcp: %v\n", err)
		return exitUsage
	}
	cfg, _, loadErr := config.Load(config.LoadOptions{Folder: folder, ExplicitFile: *configFile})
	if loadErr != nil {
		fmt.Fprintf(stderr, "loom-lsp mcp: %v\n", loadErr)
		return exitFailed
	}
	dir := *stateDir
	if dir == "" {
		if dir, err = journal.DefaultStateDir(); err != nil {
			fmt.Fprintf(stderr, "loom-lsp mcp: %v\n", err)
			return exitFailed
		}
	}
	store := mcp.NewTokenStore(mcp.DefaultTokenFile(dir))
	specs := mcpSpecs(cfg, folder)
	switch verb {
	case "list":
		return mcpList(specs, store, stdout)
	case "login", "logout":
		sp, ok := findSpec(specs, names[0])
		if !ok {
			fmt.Fprintf(stderr, "loom-lsp mcp %s: no MCP server %q in this folder's configuration (loom-lsp mcp list names them)\n", verb, names[0])
			return exitFailed
		}
		if verb == "logout" {
			return mcpLogout(sp, store, stdout, stderr)
		}
		return mcpLogin(sp, store, stdout, stderr)
	}
	return c.usageError(stderr, "unknown %q: say list, login NAME or logout NAME", verb)
}

func findSpec(specs []mcp.Spec, name string) (mcp.Spec, bool) {
	for _, sp := range specs {
		if sp.Name == name {
			return sp, true
		}
	}
	return mcp.Spec{}, false
}

// mcpSpecs are the folder's servers as `mcp list` starts them: HTTP
// servers and your own stdio servers; a repository's stdio server runs
// only under the sandbox the editor and exec give it, so it is listed,
// not started, here.
func mcpSpecs(cfg config.Config, folder string) []mcp.Spec {
	names := make([]string, 0, len(cfg.MCP.Servers))
	for name := range cfg.MCP.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var specs []mcp.Spec
	for _, name := range names {
		srv := cfg.MCP.Servers[name]
		pass := map[string]string{}
		for k, v := range srv.Env {
			if v != cfg.Model.APIKeyEnv {
				pass[k] = v
			}
		}
		res, err := srv.Resolve(os.Getenv)
		sp := mcp.Spec{Name: name, Command: res.Command, Args: res.Args, Dir: folder, URL: res.URL, Headers: res.Headers,
			Env: append(mcp.Environ(os.Getenv, pass), res.SetEnv...), Roots: []string{folder}, Timeout: srv.CallTimeout(),
			ClientID: srv.OAuthClientID, Scopes: srv.OAuthScopes,
			ClientMetadataURL: srv.OAuthClientMetadataURL}
		switch {
		case err != nil:
			sp.NotStarted = err.Error()
		case srv.FromWorkspace() && !cfg.Trusted():
			sp.NotStarted = "the folder is not trusted (" + execTrustHow + ")"
		case srv.FromWorkspace() && srv.Command != "":
			sp.NotStarted = "a repository's stdio server: it starts in the sandbox of the editor or loom-lsp exec, not here"
		}
		specs = append(specs, sp)
	}
	return specs
}

// mcpList starts the servers, waits until none is starting (or a
// minute), and prints each one's state.
func mcpList(specs []mcp.Spec, store *mcp.TokenStore, stdout io.Writer) int {
	if len(specs) == 0 {
		fmt.Fprintln(stdout, "no MCP servers configured for this folder")
		return exitOK
	}
	m := mcp.NewManager(mcp.Options{Tokens: store, Version: buildVersion()})
	defer m.Close()
	m.Apply(specs)
	deadline := time.After(startWait)
wait:
	for starting(m.Status()) {
		select {
		case <-m.Changed():
		case <-deadline:
			break wait
		}
	}
	urls := map[string]string{}
	for _, sp := range specs {
		urls[sp.Name] = sp.URL
	}
	for _, st := range m.Status() {
		fmt.Fprintln(stdout, listLine(st, urls[st.Name], store))
	}
	fmt.Fprintf(stdout, "\nQuestions from servers (elicitation, form and url): answered in your editor; loom-lsp exec declines them (--elicit).\n")
	if store != nil {
		fmt.Fprintf(stdout, "Sign-ins are kept in %s (mode 0600).\n", store.Path())
	}
	return exitOK
}

// listLine is one server's line of `mcp list`: its state, what it
// offers, and whether a sign-in is stored for it.
func listLine(st mcp.ServerStatus, url string, store *mcp.TokenStore) string {
	switch st.State {
	case mcp.StateReady:
		line := fmt.Sprintf("%s\tconnected: %d tools, %d prompts, %d resources", st.Name, st.Tools, st.Prompts, st.Resources)
		if st.Templates > 0 {
			line += fmt.Sprintf(" (+%d templates)", st.Templates)
		}
		if url != "" && store != nil && store.Has(url) {
			line += "; signed in"
		}
		return line
	case mcp.StateNeedsSignIn:
		return fmt.Sprintf("%s\tneeds sign-in: loom-lsp mcp login %s", st.Name, st.Name)
	}
	line := fmt.Sprintf("%s\t%s", st.Name, st.State)
	if st.Error != "" {
		line += ": " + st.Error
	}
	return line
}

// startWait bounds how long `mcp list` waits for the servers.
const startWait = time.Minute

func starting(st []mcp.ServerStatus) bool {
	for _, s := range st {
		if s.State == mcp.StateStarting {
			return true
		}
	}
	return false
}

// mcpLogin signs in to sp, printing the URL for the user's browser.
func mcpLogin(sp mcp.Spec, store *mcp.TokenStore, stdout, stderr io.Writer) int {
	if sp.URL == "" {
		fmt.Fprintf(stderr, "loom-lsp mcp login: %q is a stdio server: only HTTP servers sign in\n", sp.Name)
		return exitFailed
	}
	ctx, cancel := context.WithTimeout(context.Background(), loginTimeout)
	defer cancel()
	res, err := mcp.Login(ctx, mcp.LoginOptions{Spec: sp, Store: store, Version: buildVersion(),
		Open: func(_ context.Context, u string) error {
			fmt.Fprintf(stdout, "To sign in to MCP server %q, open this URL in your browser:\n\n  %s\n\nWaiting for the browser (up to %s)...\n", sp.Name, u, loginTimeout)
			return nil
		}})
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp mcp login: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "signed in to %q: %d tools, %d prompts, %d resources (the token is kept in %s; editors pick it up when the server restarts)\n",
		sp.Name, res.Tools, res.Prompts, res.Resources, store.Path())
	return exitOK
}

func mcpLogout(sp mcp.Spec, store *mcp.TokenStore, stdout, stderr io.Writer) int {
	had, err := mcp.Logout(store, sp)
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp mcp logout: %q: %v\n", sp.Name, err)
		return exitFailed
	}
	if !had {
		fmt.Fprintf(stdout, "%q was not signed in\n", sp.Name)
		return exitOK
	}
	fmt.Fprintf(stdout, "signed out of %q (its token is forgotten)\n", sp.Name)
	return exitOK
}
