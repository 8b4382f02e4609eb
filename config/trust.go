package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Workspace trust.
//
// A repository's own .loom.toml (or loom.toml) is written by whoever wrote
// the repository, not by the user. Keys that choose where model requests go
// and with which credentials, that allow commands, or that change the
// hooks would hand a cloned repository the user's secrets and shell, so
// they are honoured from a workspace file only when the folder is trusted:
//
//   - listed, or inside a folder listed, in the user's own config
//     ([trust] folders = ["/abs/path", ...]), symlinks resolved;
//   - listed in the trust file that the loom.trust command appends to
//     ([DefaultTrustFile]);
//   - vouched for by the editor: {"trust": {"workspace": true}} in
//     initializationOptions or workspace/didChangeConfiguration.
//
// A workspace file never sets trust.* itself. Otherwise the keys are left
// out and [Config.TrustNotice] says which, and how to trust the folder.

// Trust is the [trust] table. It is read from the user's config and the
// editor's overrides only; a workspace file's trust keys are ignored.
type Trust struct {
	// Folders are absolute paths of trusted folders; their subfolders are
	// trusted too.
	Folders []string `toml:"folders"`
	// Workspace is set by the editor when it trusts the workspace (VS Code
	// sends vscode.workspace.isTrusted).
	Workspace bool `toml:"workspace"`
}

// trustState is what Load decided about the workspace folder's trust.
type trustState struct {
	folder  string   // the workspace folder Load read, "" when none
	trusted bool     // the folder is trusted
	file    string   // the workspace file whose keys were ignored
	ignored []string // dotted keys of that file left out, sorted
}

// restrictedKey reports whether a workspace file may set key (a dotted
// path) to val only when the folder is trusted. Keys that only narrow
// what the user allowed (tools.bash = "ask" or "deny") stay allowed.
func restrictedKey(key string, val any) bool {
	switch key {
	case "model.base_url", "model.api_key_env", "model.headers", "model.provider", "model.script":
		return true
	case "tools.bash":
		s, _ := val.(string)
		return s == string(PolicyAllow)
	}
	if SandboxKeyWidens(key, val) {
		return true
	}
	for _, table := range []string{"hooks", "mcp", "trust"} {
		if key == table || strings.HasPrefix(key, table+".") {
			return true
		}
	}
	return false
}

// RestrictedKeys names the keys (or tables) a workspace file sets only
// for a trusted folder, for documentation and messages.
func RestrictedKeys() []string {
	return []string{"model.base_url", "model.api_key_env", "model.headers", "model.provider",
		"model.script", `tools.bash = "allow"`, "hooks.*", "mcp.*",
		`tools.sandbox = "off"`, `tools.network other than "off"`, "tools.sandbox_write", "tools.sandbox_hide"}
}

// Trusted reports whether the workspace folder c was loaded for is
// trusted, so that its workspace file's restricted keys were honoured.
// It is false for a Config loaded without a folder, and for a hand-built
// Config. Packages that start commands from configuration (MCP servers)
// must start those a workspace file asked for only when this is true.
func (c Config) Trusted() bool { return c.trust.trusted }

// IgnoredKeys returns the keys of the workspace file that were left out
// because the folder is not trusted, sorted; nil when none were.
func (c Config) IgnoredKeys() []string { return slices.Clone(c.trust.ignored) }

// TrustNotice is the one message to show when keys of an untrusted
// workspace file were ignored: which ones, and how to trust the folder.
// It is "" when nothing was ignored.
func (c Config) TrustNotice() string {
	t := c.trust
	if len(t.ignored) == 0 {
		return ""
	}
	where := DefaultUserFile()
	if where == "" {
		where = "~/.config/loom/loom.toml"
	}
	return fmt.Sprintf("%s is in a folder you have not trusted, so these settings of it were ignored: %s. "+
		"If you trust %s, run the command loom.trust (\"Loom: Trust this folder\"), trust the workspace in your editor, "+
		"or add it to your own config %s:\n\n  [trust]\n  folders = [%q]",
		t.file, strings.Join(t.ignored, ", "), t.folder, where, t.folder)
}

// FolderTrusted reports whether folder is one of folders or inside one of
// them, after resolving symlinks on both sides.
func FolderTrusted(folder string, folders []string) bool {
	if folder == "" {
		return false
	}
	f := resolvePath(folder)
	for _, t := range folders {
		if !filepath.IsAbs(t) {
			continue
		}
		t = resolvePath(t)
		if f == t || strings.HasPrefix(f, strings.TrimSuffix(t, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// resolvePath makes p clean and absolute, with symlinks resolved when it
// exists.
func resolvePath(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// DefaultTrustFile returns the file loom.trust records trusted folders in:
// trusted-folders next to the default user config file. "" when there is
// no config directory.
func DefaultTrustFile() string {
	if f := DefaultUserFile(); f != "" {
		return filepath.Join(filepath.Dir(f), "trusted-folders")
	}
	return ""
}

// ReadTrustFile returns the folders listed in a trust file: one absolute
// path per line; blank lines and lines starting with # are skipped. A
// missing file lists none.
func ReadTrustFile(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Source: path, Msg: readErrMsg(err)}
	}
	var folders []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			folders = append(folders, line)
		}
	}
	return folders, nil
}

// TrustFolder records folder (made absolute, symlinks resolved) as trusted
// in the trust file at path, creating it. Recording a folder already
// trusted by the file is a no-op.
func TrustFolder(path, folder string) error {
	if path == "" {
		return errors.New("trust: no config directory to record the trusted folder in (set HOME or XDG_CONFIG_HOME)")
	}
	if !filepath.IsAbs(folder) {
		return fmt.Errorf("trust: %q is not an absolute path", folder)
	}
	folder = resolvePath(folder)
	have, err := ReadTrustFile(path)
	if err != nil {
		return err
	}
	if FolderTrusted(folder, have) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	header := ""
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		header = "# Folders trusted with loom.trust: their .loom.toml may choose the model server,\n# its credentials, allow commands and change hooks. One absolute path per line.\n"
	}
	_, err = f.WriteString(header + folder + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	return nil
}

// editorTrusts reports whether one of the overrides sets trust.workspace
// to true (the editor vouches for the workspace). The overrides are
// applied (and checked) later; here a malformed one vouches for nothing.
func editorTrusts(overrides []Override) bool {
	trusted := false
	for _, o := range overrides {
		var raw struct {
			Trust *struct {
				Workspace *bool `json:"workspace"`
			} `json:"trust"`
		}
		if json.Unmarshal(o.JSON, &raw) != nil || raw.Trust == nil || raw.Trust.Workspace == nil {
			continue
		}
		trusted = *raw.Trust.Workspace // a later layer overrides an earlier one
	}
	return trusted
}
