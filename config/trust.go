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
// A repository's own .loom.toml (or loom.toml), and the settings an editor
// pushes (which a repository's .vscode/settings.json or .dir-locals.el may
// fill), are written by whoever wrote the repository, or by the agent's
// own commands, not by the user. Their widening keys ([WideningKey]) are
// honoured only when the folder is trusted and their values are those the
// user trusted:
//
//   - the folder is trusted when it is listed, or inside a folder listed,
//     in the user's own config ([trust] folders = ["/abs/path", ...]) or in
//     the trust file ([DefaultTrustFile]) that loom.trust writes, or when
//     the editor vouches for it (trust.workspace = true in the
//     initializationOptions of a client that declares
//     experimental.loom.workspaceTrust, [Override.VouchesTrust]);
//   - trust binds to content: the trust file records, per folder, a hash
//     of the widening values it was trusted with. When they change (a
//     command, a git pull), they are ignored, with one notice, until the
//     user confirms again (loom.trust records the new hash). A trusted
//     folder seen for the first time records its values as they are,
//     even when it has none: a .loom.toml that appears later (written by
//     a command, brought by a git pull) is held back like a changed one.
//
// Trust keys are read from the user's own file only (trust.workspace also
// from a vouching client). Keys that only narrow (tools.bash = "deny")
// apply at once from any source.

// Trust is the [trust] table. It is read from the user's config (and
// trust.workspace from a vouching client's initializationOptions only);
// any other layer's trust keys are ignored.
type Trust struct {
	// Folders are absolute paths of trusted folders; their subfolders are
	// trusted too.
	Folders []string `toml:"folders"`
	// Workspace is set by the editor when it trusts the workspace (VS Code
	// sends vscode.workspace.isTrusted), in the initializationOptions of
	// a client declaring experimental.loom.workspaceTrust; anywhere else
	// it counts for nothing.
	Workspace bool `toml:"workspace"`
}

// trustState is what Load decided about the workspace folder's trust.
type trustState struct {
	folder  string // the workspace folder Load read (resolved), "" when none
	vouched bool   // the user (or the editor) trusts the folder
	trusted bool   // vouched, and the widening values are the trusted ones
	// changed: vouched, but the widening values differ from those the
	// trust file records.
	changed bool
	// appeared: changed, and the folder had no widening values when it
	// was trusted (a .loom.toml that appeared since).
	appeared bool
	// renewed: the trust file had lines for a folder at this path, but
	// another directory is there now (deleted and created again, or
	// cloned afresh), so they counted for nothing.
	renewed bool
	quiet   bool      // a layer is pending: no notice yet
	hash    string    // the widening values' contentHash, "" when none
	file    string    // the workspace file, when it held widening keys back
	ignored []heldKey // widening keys left out, sorted by key
	// floor is the user's own narrowing, which the workspace layers'
	// default values must not undo.
	floor ownFloor
}

// Trusted reports whether the workspace folder c was loaded for is
// trusted with its current widening values, so that its workspace
// layers' widening keys were honoured. It is false for a Config loaded
// without a folder, and for a hand-built Config. Packages that start
// commands from configuration (MCP servers) must start those a workspace
// file asked for only when this is true.
func (c Config) Trusted() bool { return c.trust.trusted }

// Vouched reports whether the user (or the editor) trusts the workspace
// folder c was loaded for, whatever its widening values: what binds to
// content on its own (the repository's agent hooks) asks this.
func (c Config) Vouched() bool { return c.trust.vouched }

// ContentHash is the hash of the folder's widening values (from its
// workspace file and pushed settings) that loom.trust records. A folder
// with none has the hash of the empty set ([NoValuesHash]), so that
// trusting it binds to having none; "" only for a Config loaded without
// a folder.
func (c Config) ContentHash() string { return c.trust.hash }

// IgnoredKeys returns the widening keys of the workspace layers that were
// left out, sorted; nil when none were.
func (c Config) IgnoredKeys() []string {
	var keys []string
	for _, h := range c.trust.ignored {
		if !slices.Contains(keys, h.key) {
			keys = append(keys, h.key)
		}
	}
	return keys
}

// DefaultTrustHow says how to trust a folder when the front end does not
// say: the LSP command any client can send.
const DefaultTrustHow = "run the command loom.trust (workspace/executeCommand)"

// TrustNotice is the one message to show when widening keys of the
// workspace layers were ignored: which ones, why, and how to trust the
// folder. how names the front end's own way ("type /trust", "run :LoomTrust");
// "" means DefaultTrustHow. It is "" when nothing was ignored.
func (c Config) TrustNotice(how string) string {
	t := c.trust
	if len(t.ignored) == 0 || t.quiet {
		return ""
	}
	if how == "" {
		how = DefaultTrustHow
	}
	// Each key once, with the layers other than the file that set it.
	var keys []string
	from := map[string][]string{}
	for _, h := range t.ignored {
		if !slices.Contains(keys, h.key) {
			keys = append(keys, h.key)
		}
		if h.src != t.file && !slices.Contains(from[h.key], h.src) {
			from[h.key] = append(from[h.key], h.src)
		}
	}
	var names []string
	for _, k := range keys {
		n := k
		if len(from[k]) > 0 {
			n += " (from " + strings.Join(from[k], " and ") + ")"
		}
		names = append(names, n)
	}
	where := t.file
	if where == "" {
		where = "the editor's settings for " + t.folder
	}
	if t.appeared {
		return fmt.Sprintf("%s appeared with settings that widen what the agent may do or spend after you trusted %s without any, so they are ignored until you confirm them: %s. "+
			"If you wrote it, %s to trust the folder with them.",
			where, t.folder, strings.Join(names, ", "), how)
	}
	if t.changed {
		return fmt.Sprintf("%s changed settings that widen what the agent may do or spend since you trusted %s, so they are ignored until you confirm them: %s. "+
			"If you made these changes, %s to trust the folder with them.",
			where, t.folder, strings.Join(names, ", "), how)
	}
	user := DefaultUserFile()
	if user == "" {
		user = "~/.config/loom/loom.toml"
	}
	untrusted := "a folder you have not trusted"
	if t.renewed {
		untrusted = "a folder you have not trusted yet (you trusted a folder at this path before, but it was deleted and created again, or cloned afresh, since: trust stays with the folder it was given to)"
	}
	return fmt.Sprintf("%s is in %s, so these settings of it were ignored: %s. "+
		"If you trust %s, %s, or add it to your own config %s:\n\n  [trust]\n  folders = [%q]",
		where, untrusted, strings.Join(names, ", "), t.folder, how, user, t.folder)
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
// path per line, optionally followed by a tab and the hash of the values
// it was trusted with; blank lines and lines starting with # are skipped.
// A missing file lists none.
func ReadTrustFile(path string) ([]string, error) {
	recs, err := readTrustRecords(path)
	recs, _ = liveRecords(recs)
	var folders []string
	for _, r := range recs {
		if r.vouches && !slices.Contains(folders, r.folder) {
			folders = append(folders, r.folder)
		}
	}
	return folders, err
}

// trustRecord is one line of the trust file: "folder", "folder<TAB>hash"
// (trusted with these values), or "folder<TAB>hash<TAB>values-only" (the
// values of a folder trusted elsewhere, by the user's own [trust] folders
// or the editor, recorded on first sight; it trusts nothing by itself);
// either may end with "<TAB>id=<identity>", the identity of the directory
// the line was written for ([folderIdentity]).
type trustRecord struct {
	folder  string
	hash    string // "" in a line written before trust bound to content
	vouches bool   // the line trusts the folder (loom.trust wrote it)
	// id is the folder's identity when the line was written; "" in a line
	// written before lines named it (it then stands for whatever directory
	// is at the path, until a trusted load rewrites it with the identity).
	id string
}

// Trust file line fields after the hash.
const (
	valuesOnly = "values-only" // the line records values only
	idPrefix   = "id="         // the folder's identity follows
)

// liveRecords returns the lines of recs written for the directory now at
// their folder's path, and the folders (resolved) of those left out. A
// folder deleted and created again, or cloned afresh, at the same path is
// a new folder that inherits nothing from the old one's lines; a line
// without an identity stands until a later line for its folder names one.
func liveRecords(recs []trustRecord) (live []trustRecord, gone []string) {
	named := map[string]int{} // folder → index of its last line with an identity
	for i, r := range recs {
		if r.id != "" && filepath.IsAbs(r.folder) {
			named[resolvePath(r.folder)] = i
		}
	}
	ids := map[string]string{}
	for i, r := range recs {
		if !filepath.IsAbs(r.folder) {
			continue
		}
		f := resolvePath(r.folder)
		if r.id == "" {
			if last, ok := named[f]; !ok || last < i {
				live = append(live, r)
			}
			continue
		}
		id, ok := ids[f]
		if !ok {
			id = folderIdentity(f)
			ids[f] = id
		}
		if r.id == id {
			live = append(live, r)
		} else if !slices.Contains(gone, f) {
			gone = append(gone, f)
		}
	}
	return live, gone
}

func readTrustRecords(path string) ([]trustRecord, error) {
	if path == "" {
		return nil, nil
	}
	data, err := readLimited(path, nil)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []trustRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		r := trustRecord{folder: strings.TrimSpace(fields[0]), vouches: true}
		if len(fields) > 1 {
			r.hash = strings.TrimSpace(fields[1])
		}
		for _, f := range fields[min(len(fields), 2):] {
			switch f = strings.TrimSpace(f); {
			case f == valuesOnly:
				r.vouches = false
			case strings.HasPrefix(f, idPrefix):
				r.id = strings.TrimPrefix(f, idPrefix)
			}
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// lastRecord returns the last line for folder (resolved).
func lastRecord(recs []trustRecord, folder string) (trustRecord, bool) {
	var last trustRecord
	ok := false
	for _, r := range recs {
		if filepath.IsAbs(r.folder) && resolvePath(r.folder) == folder {
			last, ok = r, true
		}
	}
	return last, ok
}

// TrustFolder records folder (made absolute, symlinks resolved) as
// trusted with the widening values whose [Config.ContentHash] is hash, in
// the trust file at path, creating it. Recording what the file already
// says last for the folder is a no-op.
func TrustFolder(path, folder, hash string) error { return appendTrust(path, folder, hash, true) }

// HoldValues records in the trust file at path that folder has no
// widening values the user trusted, unless the file has a line for it
// already: for a folder in which a command (not the user) wrote loom's
// configuration file. Trust on first sight would otherwise take the
// values the agent wrote as the user's, when the folder is first opened
// under a trusted parent ([trust] folders); with this record they are
// held back like values that appeared since the folder was trusted.
func HoldValues(path, folder string) error {
	recs, err := readTrustRecords(path)
	if err != nil {
		return err
	}
	recs, _ = liveRecords(recs)
	if _, ok := lastRecord(recs, resolvePath(folder)); ok {
		return nil
	}
	return appendTrust(path, folder, NoValuesHash, false)
}

// appendTrust appends a line for folder to the trust file at path: one
// that trusts it (vouches), or one that records its values only.
func appendTrust(path, folder, hash string, vouches bool) error {
	if path == "" {
		return errors.New("trust: no config directory to record the trusted folder in (set HOME or XDG_CONFIG_HOME)")
	}
	if !filepath.IsAbs(folder) {
		return fmt.Errorf("trust: %q is not an absolute path", folder)
	}
	folder = resolvePath(folder)
	recs, err := readTrustRecords(path)
	if err != nil {
		return err
	}
	id := folderIdentity(folder)
	if last, ok := lastRecord(recs, folder); ok && last.hash == hash && last.id == id && (last.vouches || !vouches) {
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
		header = trustFileHeader
	}
	line := trustLine(folder, hash, vouches, id)
	_, err = f.WriteString(header + line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	return nil
}

// trustFileHeader starts a new trust file.
const trustFileHeader = "# Folders trusted with loom.trust: their .loom.toml and the editor's settings may choose the model server,\n" +
	"# its credentials, the cost of a turn, allow commands, start MCP servers and change hooks, with the values\n" +
	"# whose hash follows the tab (a change needs loom.trust again), while the folder is the one trusted (its id:\n" +
	"# a folder deleted and created again, or cloned afresh, is a new one). One absolute path per line; the last line wins.\n"

// trustLine is the trust file's line for folder: its path, the hash of
// its values, whether it only records them (not vouching), and its
// identity; a bare path when there is nothing else.
func trustLine(folder, hash string, vouches bool, id string) string {
	fields := []string{folder, hash}
	if !vouches {
		fields = append(fields, valuesOnly)
	}
	if id != "" {
		fields = append(fields, idPrefix+id)
	}
	if len(fields) == 2 && hash == "" {
		fields = fields[:1]
	}
	return strings.Join(fields, "\t")
}

// editorTrusts reports whether an override of a client that vouches for
// trust ([Override.VouchesTrust]) sets trust.workspace to true. Any other
// layer's trust.workspace counts for nothing. The overrides are applied
// (and checked) later; here a malformed one vouches for nothing.
func editorTrusts(overrides []Override) bool {
	trusted := false
	for _, o := range overrides {
		if !o.VouchesTrust {
			continue
		}
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

// decideTrust sets c.trust: whether the folder is trusted, and whether
// the widening values of its workspace layers (ws, and the pushed
// overrides) are those the trust file records. A trusted folder seen for
// the first time (no record yet, or a record from before hashes) records
// its values, unless a layer is still pending.
func (c *Config) decideTrust(opts LoadOptions, ws *layer, peers []*layer, overrides []*layer, floor ownFloor) error {
	held, pending := wideningValues(opts, ws, peers, overrides, floor)
	t := trustState{folder: resolvePath(opts.Folder), floor: floor}
	recs, err := readTrustRecords(opts.trustFile())
	// A line written for a directory that is no longer at its path (the
	// folder was deleted and created again, or cloned afresh) counts for
	// nothing: neither its trust nor its values pass to the new folder.
	recs, gone := liveRecords(recs)
	t.vouched = c.vouched(opts, t.folder, recs)
	// Trust keys of these layers never apply, and are no content to trust.
	content := slices.DeleteFunc(slices.Clone(held), func(h heldKey) bool { return isTrustKey(h.key) })
	// A folder with no widening values records that too: trust binds to
	// having none.
	t.hash = contentHash(content)
	last, recorded := lastRecord(recs, t.folder)
	rec := last.hash
	t.renewed = slices.Contains(gone, t.folder) && !recorded
	switch {
	case !t.vouched:
	case opts.Trusted, recorded && rec == t.hash:
		t.trusted = true
		if recorded && last.id == "" {
			// A line from before lines named the folder's identity: it
			// now names this folder's (best effort, as below).
			_ = appendTrust(opts.trustFile(), t.folder, last.hash, last.vouches)
		}
	case recorded && rec != "":
		// Changed since trusted. While a layer is pending the values are
		// incomplete: held back without a notice until it arrives.
		t.changed, t.quiet = true, pending
		t.appeared = rec == NoValuesHash
	case pending:
		t.trusted = true // provisional: recorded once every layer is in
	default:
		// A failure to record (a read-only config directory) leaves the
		// folder trusted; the next load tries again.
		_ = appendTrust(opts.trustFile(), t.folder, t.hash, false)
		t.trusted = true
	}
	if !t.trusted {
		t.hold(held, append([]*layer{ws}, peers...))
	}
	c.trust = t
	return err
}

// wideningValues are the widening values of a folder's workspace layers
// (ws, the peers' files, and the pushed overrides), and whether one of
// its layers is still pending.
func wideningValues(opts LoadOptions, ws *layer, peers []*layer, overrides []*layer, floor ownFloor) (held []heldKey, pending bool) {
	if ws != nil {
		held = append(held, ws.widening(floor)...)
	}
	for _, l := range peers {
		held = append(held, l.widening(floor)...)
	}
	for i, l := range overrides {
		pending = pending || opts.Overrides[i].Pending
		if l != nil && l.pushed {
			held = append(held, l.widening(floor)...)
		}
	}
	return held, pending
}

// vouched reports whether the user vouches for folder: trusted by the
// caller or the editor, or listed (in [trust] folders, or by a trust
// record that vouches).
func (c *Config) vouched(opts LoadOptions, folder string, recs []trustRecord) bool {
	listed := slices.Clone(c.Trust.Folders)
	for _, r := range recs {
		if r.vouches {
			listed = append(listed, r.folder)
		}
	}
	return opts.Trusted || editorTrusts(opts.Overrides) || FolderTrusted(folder, listed)
}

// hold records the values an untrusted folder's layers hold back, by
// key, and the file to name: the first of layers that set one of them (a
// change in the editor's settings alone does not blame a file).
func (t *trustState) hold(held []heldKey, layers []*layer) {
	t.ignored = held
	slices.SortStableFunc(t.ignored, func(a, b heldKey) int { return strings.Compare(a.key, b.key) })
	for _, l := range layers {
		if l != nil && t.file == "" && slices.ContainsFunc(held, func(h heldKey) bool { return h.src == l.src }) {
			t.file = l.src
		}
	}
}

// workspaceSkip is what a workspace layer leaves out: its trust keys, and
// its widening keys unless the folder is trusted with their values.
func (c *Config) workspaceSkip() func(key string, val any) bool {
	trusted, floor := c.trust.trusted, c.trust.floor
	return func(key string, val any) bool {
		return isTrustKey(key) || (!trusted && floor.widens(key, val))
	}
}

func isTrustKey(key string) bool { return key == "trust" || strings.HasPrefix(key, "trust.") }
