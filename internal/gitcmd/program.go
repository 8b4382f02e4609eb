package gitcmd

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Programs loom runs with the user's rights (git; bash for a command the
// user let run outside the sandbox) are looked up on PATH as
// exec.LookPath does, but never in a folder loom serves, where the
// agent's commands write. The user's
// PATH may name a directory of the workspace (direnv's PATH_add bin,
// layout node's node_modules/.bin, and an editor started from that
// shell passes it on): a "git" the agent put there would otherwise run
// outside the sandbox at the next auto-commit.

var avoided struct {
	sync.Mutex
	dirs []string
}

// Avoid adds dir (a folder loom serves, where the agent's commands
// write) to the directories [Program] never takes a program from.
func Avoid(dir string) {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	avoided.Lock()
	defer avoided.Unlock()
	for _, d := range avoided.dirs {
		if d == dir {
			return
		}
	}
	avoided.dirs = append(avoided.dirs, filepath.Clean(dir))
}

// Program returns the path of the executable name on PATH, skipping
// relative entries and those inside an avoided directory; name itself when there is none (starting it then
// fails as before: not found).
func Program(name string) string {
	avoided.Lock()
	avoid := append([]string(nil), avoided.dirs...)
	avoided.Unlock()
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			continue
		}
		if inside(real, avoid) {
			continue
		}
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			continue
		}
		// The program itself may be a link into an avoided directory.
		if r, err := filepath.EvalSymlinks(p); err != nil || inside(r, avoid) {
			continue
		}
		return p
	}
	return name
}

func inside(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}
