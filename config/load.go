package config

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// LoadOptions says where Load reads from.
type LoadOptions struct {
	// UserFile is the user's config file; "" means DefaultUserFile().
	// A missing user file is fine.
	UserFile string
	// ExplicitFile (--config FILE) replaces the user file and must exist.
	ExplicitFile string
	// Folder is the workspace folder: Load reads <Folder>/.loom.toml, or
	// <Folder>/loom.toml when that is absent. "" means none.
	Folder string
	// Overrides apply last, in order: typically initializationOptions, then
	// the settings of workspace/didChangeConfiguration.
	Overrides []Override
	// TrustFile lists folders trusted with loom.trust; "" means
	// DefaultTrustFile().
	TrustFile string
	// Trusted vouches for Folder whatever the user's config says (the
	// caller asked the user).
	Trusted bool
	// Home is the user's home directory, where the peers' user-level MCP
	// files are (see PeerFiles); "" means os.UserHomeDir().
	Home string
	// NoPeerFiles leaves the peers' MCP files unread.
	NoPeerFiles bool
}

// Override is a JSON object from the editor with the same keys as the TOML
// (nested objects, snake_case). A null value leaves the key unset.
// A relative model.script is resolved against LoadOptions.Folder.
type Override struct {
	// Name names the source in errors, e.g. "initializationOptions".
	Name string
	// JSON is the object; empty or "null" means no override.
	JSON []byte
	// Pushed marks the settings an editor pushes or is asked for
	// (workspace/didChangeConfiguration, workspace/configuration): a
	// repository may fill them (.vscode/settings.json, .dir-locals.el), so
	// their widening keys follow the rule of a workspace file (see
	// [Trust]), and their trust keys are ignored.
	Pushed bool
	// VouchesTrust marks the initializationOptions of a client that
	// declares experimental.loom.workspaceTrust: only there does
	// trust.workspace count.
	VouchesTrust bool
	// Pending marks a layer the client has yet to send (the server asked
	// for it): until it arrives, Load records no first trust of a folder,
	// so that the record covers every layer.
	Pending bool
}

// SourceKind says what a Source is.
type SourceKind string

// Source kinds, in precedence order.
const (
	SourceUser      SourceKind = "user"      // user file or --config file
	SourceWorkspace SourceKind = "workspace" // <folder>/.loom.toml or loom.toml
	SourceOverride  SourceKind = "override"  // JSON from the editor
)

// Source is one source Load applied.
type Source struct {
	Kind SourceKind
	// Name is the file path, or the Override's name.
	Name string
}

// DefaultUserFile returns $XDG_CONFIG_HOME/loom/loom.toml, or
// ~/.config/loom/loom.toml when XDG_CONFIG_HOME is unset or relative.
// It returns "" when neither can be determined.
func DefaultUserFile() string {
	if dir := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "loom", "loom.toml")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "loom", "loom.toml")
}

// workspaceNames are the workspace config files, preferred first.
var workspaceNames = []string{".loom.toml", "loom.toml"}

// Files returns every file Load may read for o, existing or not: the user
// (or explicit) file, then <Folder>/.loom.toml and <Folder>/loom.toml.
// A file watcher watches these to reload on change.
func (o LoadOptions) Files() []string {
	var files []string
	if f := o.userFile(); f != "" {
		files = append(files, f)
	}
	if o.Folder != "" {
		for _, n := range workspaceNames {
			files = append(files, filepath.Join(o.Folder, n))
		}
	}
	if !o.NoPeerFiles {
		for _, f := range PeerFiles(o.Folder, o.Home) {
			if !slices.Contains(files, f.Path) {
				files = append(files, f.Path)
			}
		}
	}
	return files
}

func (o LoadOptions) trustFile() string {
	if o.TrustFile != "" {
		return o.TrustFile
	}
	return DefaultTrustFile()
}

func (o LoadOptions) userFile() string {
	switch {
	case o.ExplicitFile != "":
		return o.ExplicitFile
	case o.UserFile != "":
		return o.UserFile
	}
	return DefaultUserFile()
}

// Load merges, in precedence order, Default(), the user file, the
// workspace file, then the overrides; each source overrides only the keys
// it sets. The widening keys of the workspace file and of pushed settings
// apply only when the folder is trusted with their current values (see
// [Trust]); otherwise they are left out and [Config.TrustNotice] says so.
// It returns the sources applied, and an error (made of *Error values) for
// an unreadable or malformed source, an unknown key, a wrong type, or a
// failed Validate. On error the Config must not be used: keep the
// previous.
func Load(opts LoadOptions) (Config, []Source, error) {
	c := Default()
	c.origins = map[string]origin{}
	var sources []Source
	var errs []error

	var user *layer
	if f := opts.userFile(); f != "" {
		l, err := readFileLayer(f, opts.ExplicitFile != "", nil)
		errs = append(errs, err)
		user = l
	}
	// Every layer is read once, so that what is hashed is what applies.
	ws, err := readWorkspaceLayer(opts.Folder)
	errs = append(errs, err)
	overrides := make([]*layer, len(opts.Overrides))
	for i, o := range opts.Overrides {
		l, err := decodeOverride(o, opts.Folder)
		overrides[i] = l
		errs = append(errs, err)
	}
	// The peers' MCP files: the user's, before the user's own file; the
	// repository's, with the workspace file (see PeerFiles).
	var peerUser, peerWS []*layer
	var shadowed map[string]bool
	if !opts.NoPeerFiles {
		peerUser, peerWS, shadowed, c.mcpNotes = peerLayers(PeerFiles(opts.Folder, opts.Home), opts.Folder, opts.Home,
			ownServers(append([]*layer{user, ws}, overrides...)...))
	}
	for _, l := range peerUser {
		errs = append(errs, c.applyLayer(l, nil))
		sources = append(sources, Source{Kind: SourceUser, Name: l.src})
		c.markPeerServers(l)
	}
	if user != nil {
		errs = append(errs, c.applyLayer(user, nil))
		sources = append(sources, Source{Kind: SourceUser, Name: user.src})
	}
	if opts.Folder != "" {
		errs = append(errs, c.decideTrust(opts, ws, peerWS, overrides, c.userFloor(opts, overrides)))
	}
	for _, l := range peerWS {
		errs = append(errs, c.applyPeerLayer(l, shadowed))
		sources = append(sources, Source{Kind: SourceWorkspace, Name: l.src})
	}
	if ws != nil {
		errs = append(errs, c.applyLayer(ws, c.workspaceSkip()))
		sources = append(sources, Source{Kind: SourceWorkspace, Name: ws.src})
		c.markWorkspaceServers(ws.src)
	}
	for i, l := range overrides {
		if l == nil {
			continue
		}
		errs = append(errs, c.applyLayer(l, c.overrideSkip(opts.Overrides[i], opts.Folder)))
		sources = append(sources, Source{Kind: SourceOverride, Name: l.src})
	}
	if err := errors.Join(errs...); err != nil {
		return c, sources, err
	}
	c.providerDefaults()
	c.dropPeerServersUsingTheKey()
	return c, sources, c.Validate()
}

// readWorkspaceLayer reads the folder's workspace file: the first of
// workspaceNames there is (nil when none is, or there is no folder).
func readWorkspaceLayer(folder string) (*layer, error) {
	if folder == "" {
		return nil, nil
	}
	for _, n := range workspaceNames {
		l, err := readFileLayer(filepath.Join(folder, n), false, []string{folder, UserConfigDir()})
		if l != nil || err != nil {
			return l, err
		}
	}
	return nil, nil
}

// userFloor is the user's own narrowing (their files and the overrides
// not pushed), which a workspace layer's default value must not undo
// (ownFloor).
func (c *Config) userFloor(opts LoadOptions, overrides []*layer) ownFloor {
	floor := ownFloor{bash: c.Tools.Bash, diagnostics: c.Tools.Diagnostics, subagents: c.Subagents.caps()}
	for i, l := range overrides {
		if l != nil && !opts.Overrides[i].Pushed {
			floor = floor.narrowedBy(l.raw)
		}
	}
	return floor
}

// overrideSkip is what override o leaves out: the trust folders, and
// trust.workspace unless it vouches trust; a pushed one, in a folder,
// is a workspace layer (workspaceSkip).
func (c *Config) overrideSkip(o Override, folder string) func(key string, val any) bool {
	if o.Pushed && folder != "" {
		return c.workspaceSkip()
	}
	return func(key string, _ any) bool {
		return key == "trust.folders" || (key == "trust.workspace" && !o.VouchesTrust)
	}
}

// providerDefaults gives provider "anthropic" its own defaults where the
// sources left them: Anthropic's API and ANTHROPIC_API_KEY.
func (c *Config) providerDefaults() {
	if c.Model.Provider != ProviderAnthropic {
		return
	}
	if !c.setBy("model.base_url") {
		c.Model.BaseURL = DefaultAnthropicURL
	}
	if !c.setBy("model.api_key_env") {
		c.Model.APIKeyEnv = "ANTHROPIC_API_KEY"
	}
}

// layer is one source's raw values, decoded once.
type layer struct {
	src     string
	raw     map[string]any
	line    func(key []string) int
	baseDir string
	// loneApprovals: see applier.
	loneApprovals bool
	pushed        bool
	// peer marks a layer made from a peer's MCP file (see PeerFiles);
	// peerLines gives the line of each of its servers.
	peer      bool
	peerLines map[string]int
}

// readFileLayer reads and decodes the TOML file at path (see readLimited
// for within). A missing file gives nil, nil unless required; a file that
// is there but unreadable or malformed gives nil and the error.
func readFileLayer(path string, required bool, within []string) (*layer, error) {
	data, err := readLimited(path, within)
	if err != nil {
		var ce *Error
		switch {
		case errors.Is(err, fs.ErrNotExist) && !required:
			return nil, nil
		case errors.As(err, &ce):
			return nil, ce
		}
		return nil, &Error{Source: path, Msg: readErrMsg(err)}
	}
	raw := map[string]any{}
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{Source: path, Line: parseErrLine(data, pe.Position), Msg: "invalid TOML: " + pe.Message}
		}
		return nil, &Error{Source: path, Msg: "invalid TOML: " + err.Error()}
	}
	lines := keyLines(string(data))
	return &layer{src: path, raw: raw, line: func(key []string) int { return lookupLine(lines, key) }, baseDir: filepath.Dir(path)}, nil
}

// decodeOverride decodes one override; nil, nil when there is none.
func decodeOverride(o Override, folder string) (*layer, error) {
	name := o.Name
	if name == "" {
		name = "overrides"
	}
	data := bytes.TrimSpace(o.JSON)
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, &Error{Source: name, Msg: "invalid JSON object: " + err.Error()}
	}
	if dec.More() {
		return nil, &Error{Source: name, Msg: "invalid JSON object: trailing data"}
	}
	return &layer{src: name, raw: raw, line: func([]string) int { return 0 }, baseDir: folder, loneApprovals: true, pushed: o.Pushed}, nil
}

// applyLayer merges l into c, leaving out the leaf keys skip names.
func (c *Config) applyLayer(l *layer, skip func(key string, val any) bool) error {
	a := applier{src: l.src, line: l.line, baseDir: l.baseDir, origins: c.origins, loneApprovals: l.loneApprovals, skip: skip}
	a.apply(reflect.ValueOf(c).Elem(), l.raw, nil)
	if l.line == nil || l.pushed || l.loneApprovals {
		slices.SortStableFunc(a.errs, func(x, y *Error) int { return strings.Compare(x.Key, y.Key) })
	} else {
		slices.SortStableFunc(a.errs, func(x, y *Error) int { return x.Line - y.Line })
	}
	return joinErrors(a.errs)
}

// widening returns the widening keys l sets (with valid values), held
// back from a scratch Config, under the user's own floor.
func (l *layer) widening(floor ownFloor) []heldKey {
	scratch := Default()
	a := applier{src: l.src, line: l.line, baseDir: l.baseDir, origins: map[string]origin{}, loneApprovals: l.loneApprovals,
		skip: floor.widens}
	a.apply(reflect.ValueOf(&scratch).Elem(), l.raw, nil)
	held := make([]heldKey, len(a.skipped))
	for i, k := range a.skipped {
		held[i] = heldKey{key: k, val: a.skippedVals[i], src: l.src}
	}
	return held
}

// parseErrLine is the line of a parse error. The library counts an
// unexpected newline as being on the next line; the byte offset does not.
func parseErrLine(data []byte, p toml.Position) int {
	if p.Start > 0 && p.Start < len(data) && data[p.Start] == '\n' {
		return 1 + bytes.Count(data[:p.Start], []byte("\n"))
	}
	return p.Line
}

func readErrMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func joinErrors(es []*Error) error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// applier sets the fields of a Config from one source's raw values (as
// decoded from TOML, or JSON with UseNumber), key by key, so that a source
// overrides only the keys it sets. The schema is the struct's toml tags.
type applier struct {
	src     string
	line    func(key []string) int
	baseDir string // for a relative model.script; "" leaves it relative
	origins map[string]origin
	errs    []*Error
	// skip, when set, leaves out a leaf key (dotted) with its value; the
	// keys left out are collected in skipped.
	skip        func(key string, val any) bool
	skipped     []string
	skippedVals []any // the values of skipped, in order
	// loneApprovals, for an editor's overrides, leaves out an
	// mcp.servers.NAME entry that sets only approve when no earlier source
	// declares NAME: the editor remembers approvals per server for every
	// folder ("Always allow in this workspace"), and a folder without that
	// server is no error.
	loneApprovals bool
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	configValueType = reflect.TypeFor[configValue]()
)

// addrOf returns a pointer to f as an interface, nil when f is not
// addressable.
func addrOf(f reflect.Value) any {
	if !f.CanAddr() {
		return nil
	}
	return f.Addr().Interface()
}

func (a *applier) fail(key []string, format string, args ...any) {
	a.errs = append(a.errs, &Error{Source: a.src, Line: a.line(key), Key: strings.Join(key, "."), Msg: fmt.Sprintf(format, args...)})
}

// apply sets the fields of the struct v named by the keys of raw.
func (a *applier) apply(v reflect.Value, raw map[string]any, path []string) {
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		key := append(slices.Clip(path), k)
		val := raw[k]
		f, ok := fieldByTag(v, k)
		if !ok {
			a.fail(key, "unknown key %q", strings.Join(key, "."))
			continue
		}
		if val == nil { // JSON null: leave unset
			continue
		}
		if f.Kind() == reflect.Map && f.Type().Elem().Kind() == reflect.Struct {
			sub, ok := val.(map[string]any)
			if !ok {
				a.fail(key, "%s: want a table, got %s", strings.Join(key, "."), describe(val))
				continue
			}
			a.applyMap(f, sub, key)
			continue
		}
		if f.Kind() == reflect.Struct && !reflect.PointerTo(f.Type()).Implements(textUnmarshaler) && !reflect.PointerTo(f.Type()).Implements(configValueType) {
			sub, ok := val.(map[string]any)
			if !ok {
				a.fail(key, "%s: want a table, got %s", strings.Join(key, "."), describe(val))
				continue
			}
			a.apply(f, sub, key)
			continue
		}
		if name := strings.Join(key, "."); a.skip != nil && a.skip(name, val) {
			// Still check the value, so the file's mistakes are reported
			// whether or not its folder is trusted.
			errs, origins := len(a.errs), a.origins
			a.origins = map[string]origin{}
			a.set(reflect.New(f.Type()).Elem(), val, key)
			a.origins = origins
			if len(a.errs) == errs {
				a.skipped = append(a.skipped, name)
				a.skippedVals = append(a.skippedVals, val)
			}
			continue
		}
		a.set(f, val, key)
	}
}

// applyMap applies each table of raw to the entry of the map of structs
// f with the same name, so that a later source overrides only the keys it
// sets of an entry an earlier source declared.
func (a *applier) applyMap(f reflect.Value, raw map[string]any, path []string) {
	if f.IsNil() {
		f.Set(reflect.MakeMap(f.Type()))
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		key := append(slices.Clip(path), k)
		sub, ok := raw[k].(map[string]any)
		if !ok {
			a.fail(key, "%s: want a table, got %s", strings.Join(key, "."), describe(raw[k]))
			continue
		}
		old := f.MapIndex(reflect.ValueOf(k))
		if _, ok := sub["approve"]; ok && len(sub) == 1 && !old.IsValid() && a.loneApprovals && strings.Join(path, ".") == "mcp.servers" {
			continue
		}
		entry := reflect.New(f.Type().Elem()).Elem()
		if old.IsValid() {
			entry.Set(old)
		}
		a.apply(entry, sub, key)
		if !old.IsValid() && entry.IsZero() {
			continue // every key was left out (an untrusted folder's)
		}
		f.SetMapIndex(reflect.ValueOf(k), entry)
	}
}

func (a *applier) record(name string, key []string) {
	a.origins[name] = origin{src: a.src, line: a.line(key)}
}

// fieldByTag finds the field of struct v whose toml tag is name.
func fieldByTag(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		if tag, _, _ := strings.Cut(sf.Tag.Get("toml"), ","); tag == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// describe names the type of a raw TOML or JSON value, with the value when
// it is short, for "want X, got Y" messages.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return "a string"
		}
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case int64:
		return fmt.Sprintf("integer %d", x)
	case float64:
		return fmt.Sprintf("float %v", x)
	case json.Number:
		return "number " + x.String()
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "an array"
	case time.Time:
		return "a datetime"
	}
	return fmt.Sprintf("%T", v)
}
