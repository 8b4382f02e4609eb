package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
)

// configKey is one key of loom.toml: a leaf of config.Config's tree.
type configKey struct {
	key      string // dotted path; NAME stands for a table's own names
	typ      string // as the user writes it
	def      string // the default, as TOML; "" when there is none to show
	doc      string // the field's doc comment, rendered for users
	widening string // "" (narrows or neutral), "yes", or the widening values
}

// configSection is one top-level table of loom.toml.
type configSection struct {
	name string // "model"
	doc  string // the section type's doc comment
	keys []configKey
}

// goDocs are the doc comments and string constants of the config package,
// read from its source.
type goDocs struct {
	types  map[string]string            // type name → doc
	fields map[string]map[string]string // type name → field name → doc
	consts map[string]string            // constant name → string value
}

// readGoDocs parses the non-test Go files of dir.
func readGoDocs(dir string) (*goDocs, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	d := &goDocs{types: map[string]string{}, fields: map[string]map[string]string{}, consts: map[string]string{}}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					d.addType(gd, s)
				case *ast.ValueSpec:
					d.addConsts(gd, s)
				}
			}
		}
	}
	return d, nil
}

func (d *goDocs) addType(gd *ast.GenDecl, s *ast.TypeSpec) {
	text := s.Doc.Text()
	if text == "" && len(gd.Specs) == 1 {
		text = gd.Doc.Text()
	}
	d.types[s.Name.Name] = text
	st, ok := s.Type.(*ast.StructType)
	if !ok {
		return
	}
	fields := map[string]string{}
	for _, f := range st.Fields.List {
		text := f.Doc.Text()
		if text == "" {
			text = f.Comment.Text()
		}
		for _, n := range f.Names {
			fields[n.Name] = text
		}
	}
	d.fields[s.Name.Name] = fields
}

func (d *goDocs) addConsts(gd *ast.GenDecl, s *ast.ValueSpec) {
	if gd.Tok != token.CONST {
		return
	}
	for i, n := range s.Names {
		if i >= len(s.Values) {
			continue
		}
		if lit, ok := s.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if v, err := strconv.Unquote(lit.Value); err == nil {
				d.consts[n.Name] = v
			}
		}
	}
}

var (
	docLinkRE   = regexp.MustCompile(`\[\*?([A-Z][A-Za-z0-9]*)(?:\.([A-Z][A-Za-z0-9]*))?\]`)
	valueLinkRE = regexp.MustCompile(`\[([A-Z][A-Za-z0-9]*)\] \(([^)]*)\)`)
	identRE     = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]+\b`)
)

// render turns a Go doc comment about field (of the struct whose fields
// map to keys) into text for users: Go names become keys and values.
func (d *goDocs) render(text, field string, keys map[string]string, fieldKeys map[string]string) string {
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return ""
	}
	name := func(typ, id string) (string, bool) {
		if id == "" {
			if v, ok := d.consts[typ]; ok {
				return "`" + strconv.Quote(v) + "`", true
			}
			if k, ok := keys[typ]; ok {
				return "`" + k + "`", true
			}
			return typ, false
		}
		if k, ok := fieldKeys[typ+"."+id]; ok {
			return "`" + k + "`", true
		}
		return typ + "." + id, false
	}
	// A link to a Go name the page cannot show, followed by its value in
	// parentheses ("[DefaultMCPTimeout] (2m)"), is the value.
	text = valueLinkRE.ReplaceAllStringFunc(text, func(m string) string {
		sm := valueLinkRE.FindStringSubmatch(m)
		if s, ok := name(sm[1], ""); ok {
			return s + " (" + sm[2] + ")"
		}
		return sm[2]
	})
	text = docLinkRE.ReplaceAllStringFunc(text, func(m string) string {
		sm := docLinkRE.FindStringSubmatch(m)
		s, _ := name(sm[1], sm[2])
		return s
	})
	if rest, ok := strings.CutPrefix(text, field+" "); ok {
		text = "`" + keys[field] + "` " + rest
	} else if rest, ok := strings.CutPrefix(text, field+", "); ok {
		text = "`" + keys[field] + "`, " + rest
	}
	text = identRE.ReplaceAllStringFunc(text, func(m string) string {
		if strings.ToUpper(m) == m {
			return m // an acronym (API, URL), not a Go name
		}
		s, _ := name(m, "")
		return s
	})
	return text
}

// loadConfigSections walks config.Config: every key, with its type,
// default, doc comment and whether it widens.
func loadConfigSections(root string) ([]configSection, error) {
	docs, err := readGoDocs(filepath.Join(root, "config"))
	if err != nil {
		return nil, err
	}
	fieldKeys := map[string]string{}
	collectKeys(reflect.TypeOf(config.Config{}), "", fieldKeys)
	def := reflect.ValueOf(config.Default())
	ct := def.Type()
	var out []configSection
	for i := range ct.NumField() {
		f := ct.Field(i)
		tag := tomlName(f)
		if tag == "" {
			continue
		}
		sec := configSection{name: tag, doc: docs.render(docs.types[f.Type.Name()], "", nil, fieldKeys)}
		walkKeys(docs, fieldKeys, f.Type, def.Field(i), tag, &sec.keys)
		out = append(out, sec)
	}
	return out, nil
}

func tomlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return name
}

// leafTypes are field types that hold one value although they are structs.
var leafTypes = map[reflect.Type]bool{
	reflect.TypeOf(config.Duration{}): true,
	reflect.TypeOf(config.Network{}):  true,
}

// collectKeys maps "Type.Field" to its dotted key, for doc links.
func collectKeys(t reflect.Type, prefix string, out map[string]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := tomlName(f)
		if tag == "" {
			continue
		}
		key := strings.TrimPrefix(prefix+"."+tag, ".")
		out[t.Name()+"."+f.Name] = key
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Struct && !leafTypes[ft]:
			collectKeys(ft, key, out)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			collectKeys(ft.Elem(), key+".NAME", out)
		}
	}
}

func walkKeys(docs *goDocs, fieldKeys map[string]string, t reflect.Type, v reflect.Value, prefix string, out *[]configKey) {
	keys := map[string]string{}
	for i := range t.NumField() {
		if tag := tomlName(t.Field(i)); tag != "" {
			keys[t.Field(i).Name] = tag
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := tomlName(f)
		if tag == "" {
			continue
		}
		key := prefix + "." + tag
		var fv reflect.Value
		if v.IsValid() {
			fv = v.Field(i)
		}
		ft := f.Type
		if ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct {
			walkKeys(docs, fieldKeys, ft.Elem(), reflect.Value{}, key+".NAME", out)
			continue
		}
		if ft.Kind() == reflect.Struct && !leafTypes[ft] {
			walkKeys(docs, fieldKeys, ft, fv, key, out)
			continue
		}
		*out = append(*out, configKey{
			key:      key,
			typ:      typeName(ft),
			def:      tomlValue(fv),
			doc:      docs.render(docs.fields[t.Name()][f.Name], f.Name, keys, fieldKeys),
			widening: widening(key),
		})
	}
}

// typeName is how a user writes a value of t.
func typeName(t reflect.Type) string {
	switch t {
	case reflect.TypeOf(config.Duration{}):
		return `duration ("30s", "2m", "1h30m")`
	case reflect.TypeOf(config.Network{}):
		return `"on", "off", or a list of "host:port"`
	case reflect.TypeOf(config.Policy("")):
		return `"allow", "ask" or "deny"`
	case reflect.TypeOf(config.EditMode("")):
		return `"auto" or "review"`
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Pointer:
		return typeName(t.Elem()) + " (optional)"
	case reflect.Slice:
		return "list of " + typeName(t.Elem()) + "s"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "table of strings"
		}
		return "table"
	}
	return t.String()
}

// tomlValue renders a default as TOML; "" when there is none.
func tomlValue(v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	switch x := v.Interface().(type) {
	case config.Duration:
		if x.Duration == 0 {
			return ""
		}
		return strconv.Quote(x.String())
	case config.Network:
		if x.Mode == config.NetworkAllow {
			return x.String()
		}
		return strconv.Quote(x.String())
	}
	switch v.Kind() {
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Slice:
		if v.Len() == 0 {
			return "[]"
		}
	case reflect.Pointer, reflect.Map:
		return ""
	}
	return fmt.Sprint(v.Interface())
}

// widening says when a workspace layer setting key widens what the agent
// may do, from config.WideningKeys: "yes", the widening values, or "".
func widening(key string) string {
	var conds []string
	for _, w := range config.WideningKeys() {
		table, isTable := strings.CutSuffix(w, ".*")
		switch {
		case w == key, isTable && (key == table || strings.HasPrefix(key, table+".")):
			return "yes"
		case strings.HasPrefix(w, key+" "):
			conds = append(conds, strings.TrimPrefix(w, key+" "))
		}
	}
	return strings.Join(conds, "; ")
}

// configPage renders docs/reference/config.md.
func configPage(root string) ([]byte, error) {
	secs, err := loadConfigSections(root)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# loom.toml reference\n\n")
	b.WriteString(generatedNote)
	b.WriteString(configIntro)
	b.WriteString("\n## Every key, with its default\n\n```toml\n")
	for i, s := range secs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%s]\n", s.name)
		for _, k := range s.keys {
			name := strings.TrimPrefix(k.key, s.name+".")
			switch {
			case strings.Contains(k.key, ".NAME"):
			case k.def == "":
				fmt.Fprintf(&b, "# %s: unset\n", name)
			default:
				fmt.Fprintf(&b, "%s = %s\n", name, k.def)
			}
		}
	}
	b.WriteString("```\n")
	for _, s := range secs {
		fmt.Fprintf(&b, "\n## [%s]\n\n", s.name)
		if s.doc != "" {
			b.WriteString(s.doc + "\n\n")
		}
		b.WriteString("| key | type | default | widening |\n|---|---|---|---|\n")
		for _, k := range s.keys {
			fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s |\n", k.key, slug(k.key), cell(k.typ), cell(codeOr(k.def, "unset")), cell(orDash(wideningWords(k.widening))))
		}
		for _, k := range s.keys {
			fmt.Fprintf(&b, "\n### %s\n\n", k.key)
			fmt.Fprintf(&b, "%s · default %s", k.typ, codeOr(k.def, "unset"))
			if k.widening != "" {
				b.WriteString(" · **widening**")
				if k.widening != "yes" {
					b.WriteString(" " + wideningWords(k.widening))
				}
			}
			b.WriteString("\n")
			if k.doc != "" {
				b.WriteString("\n" + k.doc + "\n")
			}
		}
	}
	return b.Bytes(), nil
}

// wideningWords says when a key widens, for a reader: "yes", or the
// values ("when = "allow"; = "ask" over your "deny"").
func wideningWords(w string) string {
	if w == "" || w == "yes" {
		return w
	}
	w = strings.TrimSuffix(strings.TrimPrefix(w, "("), ")")
	return "when " + w
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func codeOr(s, none string) string {
	if s == "" {
		return none
	}
	return "`" + s + "`"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

const configIntro = `This page lists every key of ` + "`loom.toml`" + `, with its type, its default
and what it does, from the doc comments of the ` + "`config`" + ` package's types.
loom-lsp reads, in this order, each overriding the keys it sets: built-in
defaults, ` + "`~/.config/loom/loom.toml`" + ` (or ` + "`$XDG_CONFIG_HOME/loom/loom.toml`" + `),
` + "`<workspace>/.loom.toml`" + ` (or ` + "`<workspace>/loom.toml`" + `), then the editor's
settings (LSP ` + "`initializationOptions`" + ` and ` + "`workspace/configuration`" + `). An
unknown key or a wrong type is an error naming ` + "`file:line`" + `; changes are
picked up without a restart, and a broken file keeps the previous
configuration.

A **widening** key gives the agent more than your own settings did: where
model requests go, what a turn may cost, what runs without asking, the
sandbox. Set by a workspace layer (a repository's ` + "`.loom.toml`" + `, or
settings the editor sends for the folder), it applies only in a folder you
trust and only with the values you trusted; the other keys apply from
anywhere. See [security-and-trust.md](../security-and-trust.md#trust-and-protected-configuration).
`

// sortedKeys lists every key of the page, for the drift test.
func sortedKeys(secs []configSection) []string {
	var out []string
	for _, s := range secs {
		for _, k := range s.keys {
			out = append(out, k.key)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}
