package agentfiles

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// IgnoredHooks names the hook configurations of the field's formats that
// folder (and the user's home, "" for none) holds, which loom does not
// run: Claude Code's "hooks" in .claude/settings.json and
// settings.local.json (and ~/.claude/settings.json), Codex's hooks.json
// and [hooks] in .codex/config.toml, and VS Code's .github/hooks/*.json.
// loom says so once rather than let a team believe its formatter or its
// rm -rf guard runs.
func IgnoredHooks(folder, home string) []Problem {
	var found []Problem
	claude := func(path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			return
		}
		var s struct {
			Hooks map[string]json.RawMessage `json:"hooks"`
		}
		if json.Unmarshal(data, &s) != nil || len(s.Hooks) == 0 {
			return
		}
		events := make([]string, 0, len(s.Hooks))
		for e := range s.Hooks {
			events = append(events, e)
		}
		sort.Strings(events)
		found = append(found, Problem{Path: path, Reason: fmt.Sprintf("hooks (%s) are not run by loom yet", strings.Join(events, ", "))})
	}
	exists := func(path, what string) {
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			found = append(found, Problem{Path: path, Reason: what + " are not run by loom yet"})
		}
	}
	claude(filepath.Join(folder, ".claude", "settings.json"))
	claude(filepath.Join(folder, ".claude", "settings.local.json"))
	exists(filepath.Join(folder, ".codex", "hooks.json"), "Codex hooks")
	if data, err := os.ReadFile(filepath.Join(folder, ".codex", "config.toml")); err == nil && strings.Contains(string(data), "[hooks") {
		found = append(found, Problem{Path: filepath.Join(folder, ".codex", "config.toml"), Reason: "Codex [hooks] are not run by loom yet"})
	}
	if matches, _ := filepath.Glob(filepath.Join(folder, ".github", "hooks", "*.json")); len(matches) > 0 {
		sort.Strings(matches)
		for _, m := range matches {
			found = append(found, Problem{Path: m, Reason: "VS Code agent hooks are not run by loom yet"})
		}
	}
	if home != "" {
		claude(filepath.Join(home, ".claude", "settings.json"))
		exists(filepath.Join(home, ".codex", "hooks.json"), "Codex hooks")
	}
	return found
}
