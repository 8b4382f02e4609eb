package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// The MCP servers users already configured for other agents.
//
// loom reads the peers' MCP configuration files unchanged, after its own
// [mcp] table: Claude Code's .mcp.json and ~/.claude.json, VS Code's
// .vscode/mcp.json and user mcp.json, Cursor's .cursor/mcp.json and
// ~/.cursor/mcp.json, Codex's [mcp_servers] in .codex/config.toml and
// ~/.codex/config.toml. A repository's files are workspace layers: their
// servers are widening keys, bound to trust like .loom.toml's, and run
// with the floor of a repository's servers. Each server is taken whole
// from the first file that defines it, in [PeerFiles] order, and only
// when loom's own files do not define it (they may still set its approve
// and timeout). Problems do not stop loom: each is a note, "file:line:
// reason", and the server is left out.

// PeerFile is one MCP configuration file of another agent that loom
// reads.
type PeerFile struct {
	// Path is the file.
	Path string
	// Agent names the agent whose file it is ("Claude Code").
	Agent string
	// Workspace marks a repository's file (bound to trust); else it is
	// the user's own.
	Workspace bool

	format peerFormat
	// project, for ~/.claude.json's local scope: the folder whose entry
	// of its projects table is read.
	project string
}

type peerFormat int

const (
	formatMCPServers  peerFormat = iota // {"mcpServers": {...}}: Claude Code, Cursor
	formatVSCode                        // {"servers": {...}, "inputs": [...]}, with comments
	formatCodex                         // TOML [mcp_servers.NAME]
	formatClaudeLocal                   // ~/.claude.json projects[folder].mcpServers
	formatGemini                        // Gemini CLI's settings.json: {"mcpServers": {...}}, comments, $VAR
)

// PeerFiles returns the peers' files loom reads for folder ("" for
// none), in precedence order (the first that defines a server name
// wins): Claude Code's local scope (its projects entry for the folder in
// ~/.claude.json), the folder's .mcp.json, .vscode/mcp.json,
// .cursor/mcp.json, .codex/config.toml and .gemini/settings.json, then
// the user's ~/.claude.json, VS Code's user mcp.json, ~/.cursor/mcp.json,
// ~/.codex/config.toml (or $CODEX_HOME/config.toml) and
// ~/.gemini/settings.json. home "" means the user's home directory.
func PeerFiles(folder, home string) []PeerFile {
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	var files []PeerFile
	claudeUser := ""
	if home != "" {
		claudeUser = filepath.Join(home, ".claude.json")
		if folder != "" {
			files = append(files, PeerFile{Path: claudeUser, Agent: "Claude Code", format: formatClaudeLocal, project: folder})
		}
	}
	if folder != "" {
		files = append(files,
			PeerFile{Path: filepath.Join(folder, ".mcp.json"), Agent: "Claude Code", Workspace: true, format: formatMCPServers},
			PeerFile{Path: filepath.Join(folder, ".vscode", "mcp.json"), Agent: "VS Code", Workspace: true, format: formatVSCode},
			PeerFile{Path: filepath.Join(folder, ".cursor", "mcp.json"), Agent: "Cursor", Workspace: true, format: formatMCPServers},
			PeerFile{Path: filepath.Join(folder, ".codex", "config.toml"), Agent: "Codex", Workspace: true, format: formatCodex},
			PeerFile{Path: filepath.Join(folder, ".gemini", "settings.json"), Agent: "Gemini CLI", Workspace: true, format: formatGemini},
		)
	}
	if home == "" {
		return files
	}
	codexHome := filepath.Join(home, ".codex")
	if d := os.Getenv("CODEX_HOME"); filepath.IsAbs(d) {
		codexHome = d
	}
	return append(files,
		PeerFile{Path: claudeUser, Agent: "Claude Code", format: formatMCPServers},
		PeerFile{Path: filepath.Join(vscodeUserDir(home), "mcp.json"), Agent: "VS Code", format: formatVSCode},
		PeerFile{Path: filepath.Join(home, ".cursor", "mcp.json"), Agent: "Cursor", format: formatMCPServers},
		PeerFile{Path: filepath.Join(codexHome, "config.toml"), Agent: "Codex", format: formatCodex},
		PeerFile{Path: filepath.Join(home, ".gemini", "settings.json"), Agent: "Gemini CLI", format: formatGemini},
	)
}

// vscodeUserDir is VS Code's user settings directory.
func vscodeUserDir(home string) string {
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "Code", "User")
	}
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "Code", "User")
	}
	return filepath.Join(home, ".config", "Code", "User")
}

// peerServer is one server of a peer's file, in loom's keys.
type peerServer struct {
	name string
	file PeerFile
	line int
	raw  map[string]any
}

func (p peerServer) at() string { return fmt.Sprintf("%s:%d", p.file.Path, p.line) }

// peerLayers reads the peers' files and returns the layers of the
// servers each contributes (the user's own, then the repository's), the
// names the repository's layers must leave out, and the notes on what was
// left out. A repository's layers hold every server its files define
// (the first file wins among them), whatever the user's files say, so
// that what trust binds to is the repository's alone. own names the
// servers loom's own layers define with a command or url: those are never
// taken from a peer, nor are the names of Claude Code's local scope (the
// user's, for this folder) from the repository.
func peerLayers(files []PeerFile, folder, home string, own map[string]bool) (user, ws []*layer, shadowed map[string]bool, notes []string) {
	p := peerPrecedence{own: own, repo: map[string]peerServer{}, users: map[string]peerServer{}, local: map[string]peerServer{}}
	var order []peerServer
	for _, f := range files {
		within := []string{filepath.Dir(f.Path)}
		if f.Workspace {
			within = []string{folder}
		}
		servers, fnotes := readPeerFile(f, within, folder, home)
		notes = append(notes, fnotes...)
		for _, s := range servers {
			note, used := p.take(s, f)
			if note != "" {
				notes = append(notes, note)
			}
			if used {
				order = append(order, s)
			}
		}
	}
	shadowed = map[string]bool{}
	for name := range own {
		shadowed[name] = true
	}
	for name := range p.local {
		shadowed[name] = true
	}
	user, ws = peerFileLayers(order, folder)
	return user, ws, shadowed, notes
}

// peerPrecedence is which peer file's server a name takes: a
// repository's file (the first among them) over the user's, Claude
// Code's local scope over the repository's, loom's own (own) over all.
type peerPrecedence struct {
	own                map[string]bool
	repo, users, local map[string]peerServer
}

// take decides on server s of file f: whether it is used (a repository's
// is kept even when loom's own or the local scope shadow it: what trust
// binds to is the repository's alone), and the note that says why it is
// not, or is replaced.
func (p *peerPrecedence) take(s peerServer, f PeerFile) (note string, used bool) {
	switch {
	case f.Workspace && p.repo[s.name].name != "":
		return fmt.Sprintf("%s: MCP server %q not used: %s defines it too, and takes precedence", s.at(), s.name, p.repo[s.name].at()), false
	case f.Workspace && p.own[s.name]:
		note = fmt.Sprintf("%s: MCP server %q not used: loom's own configuration defines it", s.at(), s.name)
	case f.Workspace && p.local[s.name].name != "":
		note = fmt.Sprintf("%s: MCP server %q not used: Claude Code's local scope for this folder (%s) defines it, and takes precedence", s.at(), s.name, p.local[s.name].at())
	case f.Workspace:
	case p.users[s.name].name != "":
		return fmt.Sprintf("%s: MCP server %q not used: %s defines it too, and takes precedence", s.at(), s.name, p.users[s.name].at()), false
	case p.own[s.name]:
		return fmt.Sprintf("%s: MCP server %q not used: loom's own configuration defines it", s.at(), s.name), false
	case p.repo[s.name].name != "":
		note = fmt.Sprintf("%s: MCP server %q is replaced by the repository's (%s) while the folder is trusted", s.at(), s.name, p.repo[s.name].at())
	}
	switch {
	case f.Workspace:
		p.repo[s.name] = s
	case f.format == formatClaudeLocal:
		p.local[s.name] = s
		p.users[s.name] = s
	default:
		p.users[s.name] = s
	}
	return note, true
}

// peerFileLayers makes a layer of each peer file's servers (by file and
// project), in order: the user's files', and the repository's.
func peerFileLayers(order []peerServer, folder string) (user, ws []*layer) {
	byFile := map[string]*layer{}
	for _, s := range order {
		key := s.file.Path + "\x00" + s.file.project
		l := byFile[key]
		if l == nil {
			lines := map[string]int{}
			l = &layer{src: s.file.Path, raw: map[string]any{"mcp": map[string]any{"servers": map[string]any{}}}, baseDir: folder,
				line: func(k []string) int {
					if len(k) >= 3 {
						return lines[k[2]]
					}
					return 0
				}, peer: true, peerLines: lines}
			byFile[key] = l
			if s.file.Workspace {
				ws = append(ws, l)
			} else {
				user = append(user, l)
			}
		}
		l.raw["mcp"].(map[string]any)["servers"].(map[string]any)[s.name] = s.raw
		l.peerLines[s.name] = s.line
	}
	return user, ws
}

// applyPeerLayer applies a repository's peer layer l: its servers
// replace whole those of the user's peer files (loom's approve kept), and
// the shadowed names are left out.
func (c *Config) applyPeerLayer(l *layer, shadowed map[string]bool) error {
	ws := c.workspaceSkip()
	skip := func(key string, val any) bool {
		rest, _ := strings.CutPrefix(key, "mcp.servers.")
		name, _, _ := strings.Cut(rest, ".")
		return shadowed[name] || ws(key, val)
	}
	if c.trust.trusted {
		for name := range l.peerLines {
			if old, ok := c.MCP.Servers[name]; ok && old.file != "" && !shadowed[name] {
				c.MCP.Servers[name] = MCPServer{Approve: old.Approve}
			}
		}
	}
	err := c.applyLayer(l, skip)
	c.markWorkspaceServers(l.src)
	for name := range l.peerLines {
		if s, ok := c.MCP.Servers[name]; ok && !shadowed[name] && (c.trust.trusted || s.file == "") {
			s.file = l.src
			c.MCP.Servers[name] = s
		}
	}
	return err
}

// readPeerFile reads one peer file's servers. A missing file gives
// nothing; an unreadable or malformed one a note.
func readPeerFile(f PeerFile, within []string, folder, home string) ([]peerServer, []string) {
	data, err := readLimited(f.Path, within)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		var ce *Error
		if errors.As(err, &ce) {
			return nil, []string{fmt.Sprintf("%s: %s: not read", f.Path, ce.Msg)}
		}
		return nil, []string{fmt.Sprintf("%s: %s: not read", f.Path, readErrMsg(err))}
	}
	var entries []peerEntry
	var bad string
	switch f.format {
	case formatCodex:
		entries, bad = codexEntries(data)
	default:
		entries, bad = jsonEntries(f, data)
	}
	if bad != "" {
		return nil, []string{fmt.Sprintf("%s: %s (a file of %s): not read", f.Path, bad, f.Agent)}
	}
	var out []peerServer
	var notes []string
	ctx := mapCtx{folder: folder, home: home, inputs: nil}
	for _, e := range entries {
		if f.format == formatVSCode {
			ctx.inputs = e.inputs
		}
		name := peerServerName(e.name)
		at := fmt.Sprintf("%s:%d", f.Path, e.line)
		var raw map[string]any
		var why string
		switch f.format {
		case formatCodex:
			raw, why = mapCodexServer(e.value, ctx)
		case formatGemini:
			raw, why = mapGeminiServer(e.value, ctx, f.Workspace)
		default:
			raw, why = mapJSONServer(e.value, ctx)
		}
		switch {
		case why == skipQuietly:
			continue
		case why != "":
			notes = append(notes, fmt.Sprintf("%s: MCP server %q not used: %s", at, e.name, why))
			continue
		case name == "":
			notes = append(notes, fmt.Sprintf("%s: MCP server %q not used: loom names servers with letters, digits, '-' and '_'", at, e.name))
			continue
		case name != e.name:
			notes = append(notes, fmt.Sprintf("%s: MCP server %q is named %q in loom (letters, digits, '-' and '_'; its tools are %s__<tool>)", at, e.name, name, name))
		}
		out = append(out, peerServer{name: name, file: f, line: e.line, raw: raw})
	}
	return out, notes
}

// peerServerName is name as a loom server name: runs of other characters
// become "-", at most 32; "" when nothing is left.
func peerServerName(name string) string {
	if ValidMCPServerName(name) {
		return name
	}
	var b strings.Builder
	dash := false
	for _, r := range name {
		switch {
		case serverNameRune(r):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-")
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	if len(s) > 32 {
		s = s[:32]
	}
	if !ValidMCPServerName(s) {
		return ""
	}
	return s
}

// serverNameRune reports whether r may be in a loom server name: an
// ASCII letter or digit, '-' or '_'.
func serverNameRune(r rune) bool {
	return r == '-' || r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

// ownServers names the servers a loom layer defines with a command or a
// url (an editor's layer that sets only approve defines none).
func ownServers(layers ...*layer) map[string]bool {
	own := map[string]bool{}
	for _, l := range layers {
		if l == nil {
			continue
		}
		m, _ := l.raw["mcp"].(map[string]any)
		servers, _ := m["servers"].(map[string]any)
		for name, v := range servers {
			s, _ := v.(map[string]any)
			if s["command"] != nil || s["url"] != nil {
				own[name] = true
			}
		}
	}
	return own
}

// markPeerServers records, for the servers the peer layer l set, the
// file they came from.
func (c *Config) markPeerServers(l *layer) {
	for name := range l.peerLines {
		if s, ok := c.MCP.Servers[name]; ok {
			s.file = l.src
			c.MCP.Servers[name] = s
		}
	}
}

// MCPNotes are the notes on the peers' MCP configuration files: what was
// left out and why, each "file:line: reason". Show them once.
func (c Config) MCPNotes() []string { return slices.Clone(c.mcpNotes) }

// dropPeerServersUsingTheKey leaves out the peers' servers that would get
// the model's API key (a ${NAME} of model.api_key_env, or passing it),
// with a note: loom never passes it to an MCP server.
func (c *Config) dropPeerServersUsingTheKey() {
	for _, name := range sortedNames(c.MCP.Servers) {
		s := c.MCP.Servers[name]
		if s.file == "" {
			continue
		}
		if k := s.usesVariable(c.Model.APIKeyEnv); k != "" {
			c.mcpNotes = append(c.mcpNotes, fmt.Sprintf("%s: MCP server %q not used: its %s reads %s, the model's API key, which loom never passes to an MCP server",
				s.file, name, k, c.Model.APIKeyEnv))
			delete(c.MCP.Servers, name)
		}
	}
}
