package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// Approval rules ("always allow `npm test`", "always allow commands
// starting with `go test`") are the user's, per workspace folder: they
// live in the user's state directory (rules/<folder>-<hash>.json), never
// in the repository, so neither a cloned repository nor the agent (whose
// writes stay inside the workspace) can add one. Beside the command
// rules, a folder's rules name the MCP servers whose tools run without
// asking ("Always allow this server's tools"): a workspace setting would
// be bound to the folder's trust and held back once changed.

// ApprovalRules holds the approval rules of every folder of a host
// (Host.Rules): read from the user's state directory the first time a
// folder's are asked for, written back (temp file and rename, private to
// the user) on every change. Its methods are safe for concurrent use.
type ApprovalRules struct {
	// stateDir is the host's state directory (Host.stateDir).
	stateDir func() (string, error)
	log      *slog.Logger

	mu     sync.Mutex
	loaded map[string]folderRules // by folder
}

// folderRules are one folder's rules, as loaded.
type folderRules struct {
	commands   []cmdrules.Rule
	mcpServers []string
	fetchHosts []string
}

// file is where folder's rules are kept, or an error when there is no
// state directory.
func (ar *ApprovalRules) file(folder string) (string, error) {
	dir, err := ar.stateDir()
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(journal.Path(filepath.Join(dir, "rules"), folder), ".jsonl") + ".json", nil
}

// rulesFileContent is the rules file's JSON.
type rulesFileContent struct {
	Folder        string          `json:"folder"`
	AllowCommands []cmdrules.Rule `json:"allowCommands"`
	// AllowMCPServers names the MCP servers whose tools run unasked.
	AllowMCPServers []string `json:"allowMcpServers,omitempty"`
	// AllowFetchHosts names the hosts the fetch tool reaches unasked.
	AllowFetchHosts []string `json:"allowFetchHosts,omitempty"`
}

// Commands returns the approval rules of folder (absolute), read
// from the state directory the first time.
func (ar *ApprovalRules) Commands(folder string) ([]cmdrules.Rule, error) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	fr, err := ar.loadLocked(folder)
	return slices.Clone(fr.commands), err
}

// MCPServers returns the MCP servers of folder (absolute) whose tools
// the user allowed for good: under approve = "ask" their calls run
// without asking.
func (ar *ApprovalRules) MCPServers(folder string) ([]string, error) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	fr, err := ar.loadLocked(folder)
	return slices.Clone(fr.mcpServers), err
}

// loadLocked returns folder's rules, reading them the first time; ar.mu
// is held.
func (ar *ApprovalRules) loadLocked(folder string) (folderRules, error) {
	if fr, ok := ar.loaded[folder]; ok {
		return fr, nil
	}
	path, err := ar.file(folder)
	if err != nil {
		return folderRules{}, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = []byte(`{}`), nil
	}
	if err != nil {
		return folderRules{}, fmt.Errorf("read the approval rules: %w", err)
	}
	var c rulesFileContent
	if err := json.Unmarshal(data, &c); err != nil {
		return folderRules{}, fmt.Errorf("read the approval rules %s: %w", path, err)
	}
	var rs []cmdrules.Rule
	for _, r := range c.AllowCommands {
		if r, err := cmdrules.Check(r, folder); err == nil && !slices.Contains(rs, r) {
			rs = append(rs, r)
		} else if err != nil {
			ar.log.Warn("approval rule left out", "file", path, "err", err)
		}
	}
	servers := ar.validNames(c.AllowMCPServers, config.ValidMCPServerName, "MCP server rule left out", "server", path)
	hosts := ar.validNames(c.AllowFetchHosts, validFetchHost, "fetch host rule left out", "host", path)
	if ar.loaded == nil {
		ar.loaded = map[string]folderRules{}
	}
	fr := folderRules{commands: rs, mcpServers: servers, fetchHosts: hosts}
	ar.loaded[folder] = fr
	return fr, nil
}

// validNames keeps the names valid accepts, each once, and logs the
// others as left out (what, with the name under key, from file path).
func (ar *ApprovalRules) validNames(names []string, valid func(string) bool, what, key, path string) []string {
	var kept []string
	for _, name := range names {
		if !valid(name) {
			ar.log.Warn(what, "file", path, key, name)
		} else if !slices.Contains(kept, name) {
			kept = append(kept, name)
		}
	}
	return kept
}

// AddCommand checks r and adds it to folder's rules, persistently.
// It returns the canonical rule added (the same rule twice is kept once),
// or an error wrapping cmdrules.ErrBadRule for a rule that could never
// match.
func (ar *ApprovalRules) AddCommand(folder string, r cmdrules.Rule) (cmdrules.Rule, error) {
	r, err := cmdrules.Check(r, folder)
	if err != nil {
		return cmdrules.Rule{}, err
	}
	return r, ar.edit(folder, func(fr *folderRules) {
		if !slices.Contains(fr.commands, r) {
			fr.commands = append(fr.commands, r)
		}
	})
}

// AddMCPServer lets the tools of folder's MCP server name run without
// asking from now on, persistently. A name no server could have is an
// error wrapping cmdrules.ErrBadRule.
func (ar *ApprovalRules) AddMCPServer(folder, name string) error {
	if !config.ValidMCPServerName(name) {
		return fmt.Errorf("%w: invalid MCP server name %q", cmdrules.ErrBadRule, name)
	}
	return ar.edit(folder, func(fr *folderRules) {
		if !slices.Contains(fr.mcpServers, name) {
			fr.mcpServers = append(fr.mcpServers, name)
		}
	})
}

// FetchHosts returns the hosts of folder (absolute) the user allowed
// the fetch tool for good: under tools.fetch = "ask" they are fetched
// without asking.
func (ar *ApprovalRules) FetchHosts(folder string) ([]string, error) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	fr, err := ar.loadLocked(folder)
	return slices.Clone(fr.fetchHosts), err
}

// AddFetchHost lets the fetch tool reach host without asking in
// folder from now on, persistently.
func (ar *ApprovalRules) AddFetchHost(folder, host string) error {
	host = strings.ToLower(host)
	if !validFetchHost(host) {
		return fmt.Errorf("%w: invalid host %q", cmdrules.ErrBadRule, host)
	}
	return ar.edit(folder, func(fr *folderRules) {
		if !slices.Contains(fr.fetchHosts, host) {
			fr.fetchHosts = append(fr.fetchHosts, host)
		}
	})
}

// RemoveFetchHost takes back AddFetchHost; it reports whether
// there was such a rule.
func (ar *ApprovalRules) RemoveFetchHost(folder, host string) (bool, error) {
	host = strings.ToLower(host)
	found := false
	err := ar.edit(folder, func(fr *folderRules) {
		found = slices.Contains(fr.fetchHosts, host)
		fr.fetchHosts = slices.DeleteFunc(fr.fetchHosts, func(x string) bool { return x == host })
	})
	return found, err
}

// validFetchHost accepts a lower-case host name or address, no port:
// an IPv6 address as url.Hostname gives it ("::1", no brackets).
func validFetchHost(host string) bool {
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() && a.Zone() == "" {
		return host == strings.ToLower(host)
	}
	return host != "" && len(host) <= 253 && host == strings.ToLower(host) && !strings.ContainsAny(host, "/:@?# \t\n")
}

// RemoveMCPServer takes back AddMCPServer; it reports whether
// there was such a rule.
func (ar *ApprovalRules) RemoveMCPServer(folder, name string) (bool, error) {
	found := false
	err := ar.edit(folder, func(fr *folderRules) {
		found = slices.Contains(fr.mcpServers, name)
		fr.mcpServers = slices.DeleteFunc(slices.Clone(fr.mcpServers), func(x string) bool { return x == name })
	})
	return found, err
}

// RemoveCommand removes r (in any spelling Check accepts) from
// folder's rules; it reports whether there was such a rule.
func (ar *ApprovalRules) RemoveCommand(folder string, r cmdrules.Rule) (bool, error) {
	if c, err := cmdrules.Check(r, folder); err == nil {
		r = c
	}
	found := false
	err := ar.edit(folder, func(fr *folderRules) {
		fr.commands = slices.DeleteFunc(slices.Clone(fr.commands), func(x cmdrules.Rule) bool {
			if x == r {
				found = true
			}
			return x == r
		})
	})
	return found, err
}

// edit changes folder's rules with edit and writes them (temp file
// and rename, private to the user).
func (ar *ApprovalRules) edit(folder string, edit func(*folderRules)) error {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	fr, err := ar.loadLocked(folder)
	if err != nil {
		return err
	}
	fr.commands = slices.Clone(fr.commands)
	fr.mcpServers = slices.Clone(fr.mcpServers)
	fr.fetchHosts = slices.Clone(fr.fetchHosts)
	edit(&fr)
	path, err := ar.file(folder)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(rulesFileContent{Folder: folder, AllowCommands: nonNil(fr.commands), AllowMCPServers: fr.mcpServers, AllowFetchHosts: fr.fetchHosts}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save the approval rules: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".rules-*")
	if err != nil {
		return fmt.Errorf("save the approval rules: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save the approval rules: %w", werr)
	}
	ar.loaded[folder] = fr
	return nil
}

func nonNil(rs []cmdrules.Rule) []cmdrules.Rule {
	if rs == nil {
		return []cmdrules.Rule{}
	}
	return rs
}
