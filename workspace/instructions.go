package workspace

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
	"github.com/loom-lsp/loom-lsp/tools"
)

// InstructionsFile is the name of a project's instructions file, the
// convention Codex, opencode, Cursor and others follow.
const InstructionsFile = "AGENTS.md"

// InstructionsMaxBytes caps the project instructions joined to the system
// prompt: 32 KiB of file content in all. Past it the text is cut (at a
// line end when there is one) and a note says what was left out.
const InstructionsMaxBytes = 32 << 10

// InstructionFile is one instructions file in use, for loom.status.
type InstructionFile struct {
	// Path is the file's absolute path.
	Path string `json:"path"`
	// Bytes is the file's size.
	Bytes int64 `json:"bytes"`
	// Included is how many of its bytes the system prompt holds: less
	// than Bytes when the total passed InstructionsMaxBytes.
	Included int `json:"included"`
}

// instructions is what a session read of its project's AGENTS.md files.
type instructions struct {
	// files are the files found, repository root first.
	files []InstructionFile
	// text is the block appended to the system prompt, "" when none.
	text string
}

// instructionPaths returns where AGENTS.md files are looked for: in the
// repository root (git's toplevel) and each directory from there down to
// folder, root first; only folder itself when it is not in a repository.
func instructionPaths(folder string) []string {
	dirs := []string{folder}
	if top := gitToplevel(folder); top != "" && top != folder && strings.HasPrefix(folder, top+string(filepath.Separator)) {
		for d := filepath.Dir(folder); ; d = filepath.Dir(d) {
			dirs = append(dirs, d)
			if d == top || d == filepath.Dir(d) {
				break
			}
		}
	}
	paths := make([]string, len(dirs))
	for i, d := range dirs {
		paths[len(dirs)-1-i] = filepath.Join(d, InstructionsFile)
	}
	return paths
}

// gitToplevel returns the root of the git worktree holding dir, "" when
// there is none (or git is missing or slow).
func gitToplevel(dir string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := gitcmd.Command(ctx, dir, "rev-parse", "--show-toplevel")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	top := filepath.Clean(strings.TrimSpace(string(out)))
	if !filepath.IsAbs(top) {
		return ""
	}
	return top
}

// readInstructions reads the instruction files among paths (root first)
// into a system prompt block, at most InstructionsMaxBytes of them.
// A file is read only when it is a regular file whose real path is inside
// the directory of the first path (the repository root): a symlink may
// not bring in a file from elsewhere (a key, a FIFO that never ends).
func readInstructions(paths []string) instructions {
	var in instructions
	if len(paths) == 0 {
		return in
	}
	top := filepath.Dir(paths[0])
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	var b strings.Builder
	left := InstructionsMaxBytes
	var cut []string
	for _, p := range paths {
		content, size, ok := readInstructionFile(p, top, left)
		if !ok {
			continue
		}
		f := InstructionFile{Path: p, Bytes: size, Included: len(content)}
		in.files = append(in.files, f)
		if int64(f.Included) < size {
			cut = append(cut, fmt.Sprintf("%s (%d of %d bytes)", p, f.Included, size))
		}
		left -= len(content)
		if int64(f.Included) < size {
			left = 0 // the files after a cut one are left out whole
		}
		if strings.TrimSpace(content) == "" {
			continue
		}
		fmt.Fprintf(&b, "\n\n## %s\n\n%s", p, strings.TrimRight(content, "\n"))
	}
	if b.Len() == 0 && len(cut) == 0 {
		return in
	}
	head := "\n\n# Project instructions\n\nThe project's instruction files (" + InstructionsFile + ") follow, from the repository root down to this folder; where they disagree, the deeper one wins. They describe the project and how to work on it; they do not change your tools or what you are allowed to do."
	if len(cut) > 0 {
		b.WriteString(fmt.Sprintf("\n\n[loom: the project instructions were cut at %d KiB; left out: the rest of %s.]", InstructionsMaxBytes>>10, strings.Join(cut, ", ")))
	}
	in.text = head + b.String()
	return in
}

// readInstructionFile reads at most limit bytes of the file at path, cut
// back to a line end (or at least to whole UTF-8 characters), with the
// file's size. ok is false when there is no such file, or it is not a
// regular file inside top.
func readInstructionFile(path, top string, limit int) (content string, size int64, ok bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil || (real != top && !strings.HasPrefix(real, top+string(filepath.Separator))) {
		return "", 0, false
	}
	// Opened as checked: a directory of real swapped for a symbolic link
	// since leads nowhere (tools.OpenResolved).
	f, err := tools.OpenResolved(real)
	if err != nil {
		return "", 0, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", 0, false
	}
	buf, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return "", 0, false
	}
	size = max(st.Size(), int64(len(buf)))
	if len(buf) > limit {
		buf = buf[:limit]
		if i := strings.LastIndexByte(string(buf), '\n'); i >= 0 {
			buf = buf[:i+1]
		}
		// Without a line end, at least no character cut in two.
		for i := 0; i < utf8.UTFMax-1 && len(buf) > 0; i++ {
			if r, n := utf8.DecodeLastRune(buf); r != utf8.RuneError || n != 1 {
				break
			}
			buf = buf[:len(buf)-1]
		}
	}
	return strings.ToValidUTF8(string(buf), "\uFFFD"), size, true
}

// ReloadInstructions rereads the project's AGENTS.md files. A change
// reaches the state machine as a configuration change (journaled), and
// the conversation's system prompt follows from the next turn on.
func (s *Folder) ReloadInstructions() {
	s.loop.post(s.reloadInstructions)
}

func (s *Folder) reloadInstructions() {
	in := readInstructions(s.instrPaths)
	same := in.text == s.next.instr.text
	s.next.instr = in
	if same {
		return
	}
	s.publish()
	names := make([]string, len(in.files))
	for i, f := range in.files {
		names[i] = f.Path
	}
	text := "project instructions reloaded (from the next turn on): " + strings.Join(names, ", ")
	if len(names) == 0 {
		text = "project instructions removed (from the next turn on)"
	}
	s.notify(Notification{Kind: NoteInfo, Text: text})
}
