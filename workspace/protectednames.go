package workspace

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
)

// A command can create a protected name none of whose directories
// existed (a first .loom.toml, .vscode/settings.json where there was no
// .vscode): the sandbox protects names by mounting what exists, and a
// mount needs a place. What such a file holds gives the agent nothing —
// loom takes the widening settings of a .loom.toml only with the user's
// trust in exactly those values (trust on first sight), and reads no
// editor's or other agent's file — but the user's editor may read it.
// So after each command loom looks at what it changed, and names every
// protected file among them: to the user, once per command, in a
// message they see, and to the model, so it does not count on it.

// protectedWrites returns the protected files (relative to the folder)
// among the paths a command changed that exist now.
func protectedWrites(folder string, run *commandRun) []string {
	var out []string
	var included []string // the worktree files git's configuration includes
	if len(run.paths) > 0 {
		for _, rel := range sandbox.IncludedConfigs(folder) {
			included = append(included, filepath.Join(folder, filepath.FromSlash(rel)))
		}
	}
	for _, p := range run.paths {
		if !config.IsProtectedIn(folder, p) && !slices.Contains(included, p) {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		rel, err := filepath.Rel(folder, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = p
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// protectedWords are the user's and the model's words about the
// protected files a command wrote; "" when it wrote none.
func protectedWords(folder, command string, rels []string) (user, model string) {
	if len(rels) == 0 {
		return "", ""
	}
	var loom, others, git, home []string
	for _, rel := range rels {
		switch base := filepath.Base(rel); {
		case base == ".loom.toml" || base == "loom.toml":
			loom = append(loom, rel)
		case config.InHomeConfig(folder, filepath.Join(folder, filepath.FromSlash(rel))):
			home = append(home, rel) // the home directory's own configuration
		case !config.IsProtected(rel):
			git = append(git, rel) // an included git configuration file
		default:
			others = append(others, rel)
		}
	}
	user = "a command the agent ran (`" + changes.CutRunes(command, 80) + "`) wrote " + strings.Join(rels, ", ") + ", configuration loom keeps from the agent"
	if len(loom) > 0 {
		user += "; loom takes no setting of " + strings.Join(loom, ", ") + " that widens what the agent may do until you confirm it (loom.trust, after reading it)"
	}
	if len(others) > 0 {
		user += "; loom does not read " + strings.Join(others, ", ") + ", but your editor or another tool may: read it before you trust this folder there, or delete it"
	}
	if len(home) > 0 {
		user += "; your shells, git or desktop may run " + strings.Join(home, ", ") + " outside any sandbox (your home directory's own configuration): read it, or delete it, before you open a new shell or session"
	}
	if len(git) > 0 {
		user += "; your own git reads " + strings.Join(git, ", ") + " (your repository's configuration includes it; loom's git takes no filter from it): read it, or delete it, before you run git here"
	}
	model = "\n[loom] this command wrote " + strings.Join(rels, ", ") + ": protected configuration; nothing in it applies to you, and the user is told."
	return user, model
}

// holdWrittenConfig records, for each folder in which a command wrote a
// file that gives loom settings (rels: protectedWrites; configFolder),
// that it has no values the user trusted (config.HoldValues), unless the
// trust file knows it already: opened later as a folder of its own under
// a trusted parent, its values are held back, not trusted on first
// sight. folder is the folder the files are relative to, trustFile the
// user's trust file.
func holdWrittenConfig(trustFile, folder string, rels []string, log *slog.Logger) {
	for _, rel := range rels {
		dir, ok := configFolder(filepath.Join(folder, filepath.FromSlash(rel)))
		if !ok {
			continue
		}
		if err := config.HoldValues(trustFile, dir); err != nil {
			log.Warn("cannot hold back the configuration a command wrote", "folder", dir, "err", err)
		}
	}
}

// configFolder is the folder whose loom settings the file at path gives:
// its own .loom.toml or loom.toml, or the editor settings a client sends
// loom for it (.vscode/settings.json, .zed/settings.json, Emacs's
// .dir-locals.el).
func configFolder(path string) (string, bool) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	switch base {
	case ".loom.toml", "loom.toml", ".dir-locals.el", ".dir-locals-2.el":
		return dir, true
	case "settings.json":
		if d := filepath.Base(dir); d == ".vscode" || d == ".zed" {
			return filepath.Dir(dir), true
		}
	}
	return "", false
}
