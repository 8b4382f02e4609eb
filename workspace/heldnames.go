package workspace

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
)

// A protected name a command created where none was (a first .git from
// git init, with core.fsmonitor and hooks; a .loom.toml; a .vscode with
// its settings.json) is held, not left to work: the user's own git,
// editor and shells would obey it with the user's full rights. Just
// after the command loom moves it out of the folder into its state
// directory, and lists it with the command's changes: keeping it
// (loom.commit with its path) moves it back, discarding it (loom.discard)
// deletes it. exec, where no one reviews, discards it at once. The
// sandbox already keeps the names that exist (read-only), so only those
// that did not exist when the command started are looked at: the
// folder's own top-level names (.git, the protected names, the files the
// repository's configuration includes); below the top level, the
// protected names among the files the command changed, and the .git of
// their directories, that were created after it started (their birth
// time, statx). Each hold is recorded beside it, so that a restarted
// loom lists it again (restoreHeld).

// heldCandidates are the folder-relative slash paths of the names a
// command may create that loom holds.
func heldCandidates(folder string) []string {
	out := []string{".git"}
	for _, n := range config.ProtectedNames {
		out = append(out, strings.TrimSuffix(n, "/"))
	}
	for _, rel := range sandbox.IncludedConfigs(folder) {
		if !strings.HasPrefix(rel, "../") && !strings.HasPrefix(rel, ".git/") {
			out = append(out, rel)
		}
	}
	return out
}

// protectedPresence records which of the held candidates, and which of
// their parent directories, exist (before a command).
func protectedPresence(folder string) map[string]bool {
	present := map[string]bool{}
	for _, rel := range heldCandidates(folder) {
		parts := strings.Split(rel, "/")
		for i := range parts {
			p := strings.Join(parts[:i+1], "/")
			if _, ok := present[p]; ok {
				continue
			}
			_, err := os.Lstat(filepath.Join(folder, filepath.FromSlash(p)))
			present[p] = err == nil
		}
	}
	return present
}

// heldTargets are what to move aside after a command: each candidate
// that exists now and did not before (before: protectedPresence), or the
// link or file the command put where one of its directories should be.
// A name under a directory that was there and is no directory now is
// left alone (the sandbox kept it).
func heldTargets(folder string, before map[string]bool) []string {
	var out []string
	for _, rel := range heldCandidates(folder) {
		if before[rel] {
			continue
		}
		parts := strings.Split(rel, "/")
		target := ""
		for i := range parts {
			p := strings.Join(parts[:i+1], "/")
			st, err := os.Lstat(filepath.Join(folder, filepath.FromSlash(p)))
			if err != nil {
				break // not there: nothing to hold
			}
			if i == len(parts)-1 {
				target = p
				break
			}
			if !st.IsDir() {
				if !before[p] {
					target = p // a link where a directory goes
				}
				break
			}
		}
		if target == "" || slices.ContainsFunc(out, func(o string) bool { return o == target || strings.HasPrefix(target, o+"/") }) {
			continue
		}
		out = append(out, target)
	}
	return out
}

// protectedHeads are the first names of the protected names (".vscode"
// of .vscode/settings.json): where a nested protected name is held from.
func protectedHeads() map[string]bool {
	heads := map[string]bool{".git": true}
	for _, n := range config.ProtectedNames {
		head, _, _ := strings.Cut(n, "/")
		heads[head] = true
	}
	return heads
}

// nestedHeldTargets are the protected names below the folder's top level
// that a command started at started created, among the paths it changed
// (paths, absolute) and their directories' .git: for each, its
// shallowest part that is a protected name's head (sub/.vscode for
// sub/.vscode/settings.json) and was created by the command, else the
// file itself when it was. Those under a top-level target (top) are
// left out. A file system that records no creation time holds nothing
// here (the names are still named).
func nestedHeldTargets(folder string, paths, top []string, started time.Time) []string {
	heads := protectedHeads()
	var out []string
	add := func(rel string) {
		if !slices.ContainsFunc(append(top, out...), func(o string) bool { return rel == o || strings.HasPrefix(rel, o+"/") }) {
			out = append(out, rel)
		}
	}
	dirs := map[string]bool{}
	for _, p := range paths {
		rel, err := filepath.Rel(folder, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		rel = filepath.ToSlash(rel)
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
		if !strings.Contains(rel, "/") || !config.IsProtectedIn(folder, p) {
			continue
		}
		parts := strings.Split(rel, "/")
		for i := 1; i < len(parts); i++ {
			q := strings.Join(parts[:i+1], "/")
			abs := filepath.Join(folder, filepath.FromSlash(q))
			if (heads[parts[i]] || i == len(parts)-1) && bornSince(abs, started) {
				add(q)
				break
			}
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if g := d + "/.git"; bornSince(filepath.Join(folder, filepath.FromSlash(g)), started) {
			add(g)
		}
	}
	return out
}

// holdCreated moves the protected names the command created (heldTargets)
// out of the folder into stateDir/held, and returns them as command
// changes to review (Held). discard deletes them instead (exec).
func holdCreated(folder, stateDir string, targets []string, command string, turn uint64, discard bool) ([]CommandChange, error) {
	if len(targets) == 0 {
		return nil, nil
	}
	var held []CommandChange
	var errs []error
	for _, rel := range targets {
		src := filepath.Join(folder, filepath.FromSlash(rel))
		base := filepath.Join(stateDir, "held")
		if err := os.MkdirAll(base, 0o700); err != nil {
			errs = append(errs, err)
			continue
		}
		stash, err := os.MkdirTemp(base, "hold-")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		dst := filepath.Join(stash, filepath.Base(src))
		if err := changes.MoveTree(src, dst); err != nil {
			errs = append(errs, fmt.Errorf("holding %s: %w", rel, err))
			os.RemoveAll(stash)
			continue
		}
		c := CommandChange{Path: src, Rel: rel, Command: command, Turn: turn, Created: true, Held: true, Stash: dst, Hash: "-"}
		c.Diff, c.Size = changes.DescribeHeld(rel, dst)
		if discard {
			os.RemoveAll(stash)
			c.Stash = ""
		} else if err := changes.WriteHeldRecord(stash, changes.HeldRecord{Folder: folder, Rel: rel, Command: command, Turn: turn}); err != nil {
			errs = append(errs, fmt.Errorf("recording %s as held: %w", rel, err))
		}
		held = append(held, c)
	}
	return held, errors.Join(errs...)
}

// heldWords are the user's and the model's words about the names held
// (or, discarded, deleted); keep and discard say how the user keeps or
// discards them in this front end.
func heldWords(held []CommandChange, discarded bool, keep, discard string) (user, model string) {
	if len(held) == 0 {
		return "", ""
	}
	var rels []string
	for _, c := range held {
		rels = append(rels, c.Rel)
	}
	names := strings.Join(rels, ", ")
	cmd := "`" + changes.CutRunes(held[0].Command, 80) + "`"
	if discarded {
		user = fmt.Sprintf("a command the agent ran (%s) created %s: configuration your git, editor or shell would obey with your rights, which only you may add; no one can review it in a headless run, so loom deleted it", cmd, names)
		model = "\n[loom] this command created " + names + ": protected configuration only the user may add; loom deleted it (a headless run cannot ask the user), so it does not exist."
		return user, model
	}
	if keep == "" {
		keep = "loom.commit with their paths"
	}
	if discard == "" {
		discard = "loom.discard with their paths"
	}
	user = fmt.Sprintf("a command the agent ran (%s) created %s: configuration your git, editor or shell would obey with your rights, which only you may add; loom moved it out of the folder, so it has no effect until you keep it (%s) — or discard it (%s)", cmd, names, keep, discard)
	model = "\n[loom] this command created " + names + ": protected configuration only the user may add; loom moved it out of the folder until the user keeps it, so it has no effect now."
	return user, model
}

// holdCreated holds the protected names a command created (run; present:
// protectedPresence before it), lists them with the turn's command
// changes and tells the user; it returns what the model reads of them,
// and the names held (folder-relative). After the command, holding the
// worktree lock.
func (r callRun) holdCreated(run *commandRun, present map[string]bool, started time.Time) (model string, rels []string) {
	s, f := r.s, r.s.folder
	discard := f.host.opts.DiscardHeld
	state, err := f.host.stateDir()
	if err != nil {
		state = filepath.Join(os.TempDir(), "loom-held")
	}
	targets := heldTargets(f.dir, present)
	targets = append(targets, nestedHeldTargets(f.dir, run.paths, targets, started)...)
	held, err := holdCreated(f.dir, state, targets, run.command, r.b.turn, discard)
	if err != nil {
		f.log.Warn("cannot hold a protected name a command created", "err", err)
		s.loop.post(func() {
			s.out.notify(Notification{Kind: NoteError, Turn: r.b.turn, Text: "loom could not move aside configuration a command created: " + err.Error(), Visible: true})
		})
	}
	if len(held) == 0 {
		return "", nil
	}
	for _, c := range held {
		rels = append(rels, c.Rel)
	}
	user, model := heldWords(held, discard, f.host.opts.KeepHow, f.host.opts.DiscardHow)
	turn := r.b.turn
	s.loop.post(func() {
		if !discard {
			s.changes.AddChanges(held)
		}
		s.out.notify(Notification{Kind: NoteCommandChanges, Turn: turn, Changes: held})
		s.out.notify(Notification{Kind: NoteInfo, Turn: turn, Text: user, Visible: true})
	})
	return model, rels
}

// restoreHeld lists again the names held in this folder before loom
// restarted (each hold's record in the state directory): they stay out
// of the folder, to be kept or discarded as before. The folder's first
// conversation does it, on its owner goroutine.
func (s *Conversation) restoreHeld() {
	state, err := s.folder.host.stateDir()
	if err != nil {
		return
	}
	var held []CommandChange
	for _, r := range changes.HeldRecords(filepath.Join(state, "held"), s.folder.dir) {
		c := CommandChange{Path: filepath.Join(s.folder.dir, filepath.FromSlash(r.Rel)), Rel: r.Rel, Command: r.Command, Turn: r.Turn,
			Created: true, Held: true, Stash: r.Stash, Hash: "-"}
		c.Diff, c.Size = changes.DescribeHeld(r.Rel, r.Stash)
		held = append(held, c)
	}
	if len(held) == 0 {
		return
	}
	s.changes.AddChanges(held)
	var rels []string
	for _, c := range held {
		rels = append(rels, c.Rel)
	}
	s.out.notify(Notification{Kind: NoteInfo, Text: "still held from before loom restarted: " + strings.Join(rels, ", ") +
		", which a command the agent ran created; it stays out of the folder, with no effect, until you keep or discard it", Visible: true})
}
