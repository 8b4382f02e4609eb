package workspace

import (
	"path/filepath"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/workspace/agentfiles"
	"github.com/loom-lsp/loom-lsp/workspace/agenthooks"
)

// Agent definitions (package agentfiles reads them) bound to trust like
// the repository's hooks: the user's and the built-in ones are always
// offered; a repository's only in a trusted folder, and only as it was
// when trusted (its fingerprint, a hash of its file, recorded in
// trusted-agents beside the trust file). One added or changed since is
// held back and named. What a definition asks never widens the child
// (subagents.go): it only names instructions, a tool allow-list within
// the parent's, and read-only.

// agentsTrustFile is where the trusted repository agent definitions'
// fingerprints are recorded, "" when there is no configuration directory.
func (f *Folder) agentsTrustFile() string {
	if f.host.opts.TrustFile == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(f.host.opts.TrustFile), "trusted-agents")
}

// readAgents reads the agent definitions of the folder and of the user,
// keeps the repository's that trust admits, and returns the lines of
// the notice naming the files not taken and the definitions held back.
func (f *Folder) readAgents(cfg config.Config) ([]agentfiles.Agent, []string) {
	userDir := ""
	if f.host.opts.TrustFile != "" {
		userDir = filepath.Dir(f.host.opts.TrustFile)
	}
	all, problems := agentfiles.Agents(f.dir, f.host.opts.Getenv("HOME"), userDir)
	lines := problemLines(problems)
	var repo []string
	for _, a := range all {
		if a.Scope == agentfiles.ScopeRepository {
			repo = append(repo, a.Fingerprint)
		}
	}
	if len(repo) == 0 {
		return all, lines
	}
	trusted := map[string]bool{}
	if cfg.Vouched() {
		file := f.agentsTrustFile()
		fps, recorded, err := agenthooks.ReadTrusted(file, f.dir)
		switch {
		case err != nil:
			f.log.Warn("trusted agent definitions unreadable", "err", err)
		case !recorded:
			// A trusted folder seen for the first time: its definitions
			// are recorded as they are, as its hooks are.
			if file != "" {
				if err := agenthooks.RecordTrusted(file, f.dir, repo); err != nil {
					f.log.Warn("cannot record the trusted agent definitions", "err", err)
				}
			}
			for _, fp := range repo {
				fps[fp] = true
			}
		}
		trusted = fps
	}
	kept := all[:0:0]
	for _, a := range all {
		if a.Scope != agentfiles.ScopeRepository || trusted[a.Fingerprint] {
			kept = append(kept, a)
			continue
		}
		why := "the folder is not trusted"
		if cfg.Vouched() {
			why = "added or changed since you trusted the folder"
		}
		lines = append(lines, "  "+a.Path+": agent "+a.Name+" held back: "+why+"; trust the folder (loom.trust) to use it")
	}
	return kept, lines
}

// trustAgents records the repository's agent definitions as they are
// now as trusted, for loom.trust.
func (f *Folder) trustAgents() error {
	file := f.agentsTrustFile()
	if file == "" {
		return nil
	}
	all, _ := agentfiles.Agents(f.dir, f.host.opts.Getenv("HOME"), filepath.Dir(f.host.opts.TrustFile))
	var fps []string
	for _, a := range all {
		if a.Scope == agentfiles.ScopeRepository {
			fps = append(fps, a.Fingerprint)
		}
	}
	return agenthooks.RecordTrusted(file, f.dir, fps)
}

// agentsNotice is the notice's text for the lines of readAgents.
func agentsNotice(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return "agent definitions not used:\n" + strings.Join(lines, "\n")
}
