package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// schemaPath is the JSON Schema of exec's JSONL events, from the root.
const schemaPath = "jsonrpc/headless/schema.json"

// schemaProp is one property of a schema object, as the page shows it.
type schemaProp struct {
	name, typ, desc string
	required        bool
}

// schemaDef is one definition of the schema: an event, or an object
// events share.
type schemaDef struct {
	name, desc string
	props      []schemaProp
}

// jsonSchema is the part of schema.json the page reads.
type jsonSchema struct {
	OneOf []struct {
		Ref string `json:"$ref"`
	} `json:"oneOf"`
	Defs map[string]json.RawMessage `json:"$defs"`
}

type schemaNode struct {
	Type        any               `json:"type"`
	Const       any               `json:"const"`
	Enum        []any             `json:"enum"`
	Ref         string            `json:"$ref"`
	Items       *schemaNode       `json:"items"`
	Description string            `json:"description"`
	Required    []string          `json:"required"`
	Properties  json.RawMessage   `json:"properties"`
	AnyOf       []json.RawMessage `json:"anyOf"`
}

// readSchema returns the event names in the schema's order and every
// definition.
func readSchema(root string) (events []string, defs map[string]schemaDef, err error) {
	raw, err := os.ReadFile(filepath.Join(root, schemaPath))
	if err != nil {
		return nil, nil, err
	}
	var s jsonSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, nil, err
	}
	for _, o := range s.OneOf {
		events = append(events, strings.TrimPrefix(o.Ref, "#/$defs/"))
	}
	defs = map[string]schemaDef{}
	for name, r := range s.Defs {
		var n schemaNode
		if err := json.Unmarshal(r, &n); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		d := schemaDef{name: name, desc: n.Description}
		if len(n.Properties) > 0 {
			keys, err := objectKeys(n.Properties)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			var props map[string]schemaNode
			if err := json.Unmarshal(n.Properties, &props); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			for _, k := range keys {
				p := props[k]
				d.props = append(d.props, schemaProp{name: k, typ: nodeType(p), desc: propDesc(p), required: contains(n.Required, k)})
			}
		}
		defs[name] = d
	}
	return events, defs, nil
}

// objectKeys lists a JSON object's keys in their order in the text.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// nodeType is a property's type as the page shows it.
func nodeType(n schemaNode) string {
	switch {
	case n.Const != nil:
		return "`" + jsonText(n.Const) + "`"
	case len(n.Enum) > 0:
		var vs []string
		for _, v := range n.Enum {
			vs = append(vs, "`"+jsonText(v)+"`")
		}
		return strings.Join(vs, ", ")
	case n.Ref != "":
		name := strings.TrimPrefix(n.Ref, "#/$defs/")
		return "[" + name + "](#" + slug(name) + ")"
	case n.Items != nil:
		return "array of " + nodeType(*n.Items)
	case len(n.AnyOf) > 0:
		var ts []string
		for _, r := range n.AnyOf {
			var a schemaNode
			if json.Unmarshal(r, &a) == nil {
				ts = append(ts, nodeType(a))
			}
		}
		return strings.Join(ts, " or ")
	}
	switch t := n.Type.(type) {
	case string:
		return t
	case []any:
		var ts []string
		for _, x := range t {
			ts = append(ts, fmt.Sprint(x))
		}
		return strings.Join(ts, " or ")
	}
	return "any"
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// propDesc is a property's description, without the schema's "optional:"
// prefix (the page has a column for it).
func propDesc(n schemaNode) string {
	return strings.TrimSpace(strings.TrimPrefix(n.Description, "optional:"))
}

// jsonlPage renders docs/reference/exec-jsonl.md.
func jsonlPage(root string) ([]byte, error) {
	events, defs, err := readSchema(root)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# exec JSONL events reference\n\n")
	b.WriteString(generatedNote)
	b.WriteString(jsonlIntro)
	b.WriteString("\n| event | what |\n|---|---|\n")
	for _, e := range events {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", e, slug(e), cell(defs[e].desc))
	}
	isEvent := map[string]bool{}
	for _, e := range events {
		isEvent[e] = true
		writeDef(&b, defs[e])
	}
	var shared []string
	for name, d := range defs {
		if !isEvent[name] {
			shared = append(shared, name)
		}
		_ = d
	}
	sort.Strings(shared)
	b.WriteString("\n## Shared definitions\n")
	for _, name := range shared {
		writeDef(&b, defs[name])
	}
	return b.Bytes(), nil
}

func writeDef(b *bytes.Buffer, d schemaDef) {
	fmt.Fprintf(b, "\n### %s\n", d.name)
	if d.desc != "" {
		fmt.Fprintf(b, "\n%s\n", d.desc)
	}
	if len(d.props) == 0 {
		return
	}
	b.WriteString("\n| field | type | | description |\n|---|---|---|---|\n")
	for _, p := range d.props {
		req := "optional"
		if p.required {
			req = "always"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", p.name, cell(p.typ), req, cell(p.desc))
	}
}

const jsonlIntro = "This page lists every event `loom-lsp exec --output jsonl` writes, one\n" +
	"JSON object per line, with its fields, generated from the JSON Schema\n" +
	"[`jsonrpc/headless/schema.json`](../../jsonrpc/headless/schema.json)\n" +
	"(a test validates every event of a scripted session against it, and\n" +
	"another that every event the Go code writes is in it). Every event has\n" +
	"a `type`; fields are only ever added; an optional field is left out\n" +
	"when empty. How to run `exec` and read its output is in\n" +
	"[exec.md](../exec.md).\n"

// goEventTypes are the event types the Go code writes: the string
// literals given to headless.Event's Type field in jsonrpc/headless and
// cmd/loom-lsp.
func goEventTypes(root string) ([]string, error) {
	seen := map[string]bool{}
	for _, dir := range []string{"jsonrpc/headless", "cmd/loom-lsp"} {
		inHeadless := dir == "jsonrpc/headless"
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			return nil, err
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				return nil, err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				addEventTypes(seen, n, inHeadless)
				return true
			})
		}
	}
	var out []string
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

// addEventTypes adds to seen the event types node n writes: the Type of
// a headless.Event literal (Event inside jsonrpc/headless), or there a
// literal assigned to a Type field.
func addEventTypes(seen map[string]bool, n ast.Node, inHeadless bool) {
	switch x := n.(type) {
	case *ast.CompositeLit:
		if !isEventType(x.Type, inHeadless) {
			return
		}
		for _, el := range x.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Type") {
				addLit(seen, kv.Value)
			}
		}
	case *ast.AssignStmt:
		if !inHeadless || len(x.Lhs) != len(x.Rhs) {
			return
		}
		for i, l := range x.Lhs {
			if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Type" {
				addLit(seen, x.Rhs[i])
			}
		}
	}
}

func isEventType(e ast.Expr, inHeadless bool) bool {
	switch t := e.(type) {
	case *ast.Ident:
		return inHeadless && t.Name == "Event"
	case *ast.SelectorExpr:
		return isIdent(t.X, "headless") && t.Sel.Name == "Event"
	}
	return false
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func addLit(seen map[string]bool, e ast.Expr) {
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		if s, err := strconv.Unquote(lit.Value); err == nil {
			seen[s] = true
		}
	}
}

// eventJSONFields are the JSON names of headless.Event's fields, read
// from the package's source (importing it would build the whole daemon).
func eventJSONFields(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "jsonrpc/headless", "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != "Event" {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, fld := range st.Fields.List {
				if fld.Tag == nil {
					continue
				}
				tag, _ := strconv.Unquote(fld.Tag.Value)
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if name != "" && name != "-" {
					out = append(out, name)
				}
			}
			return false
		})
	}
	return out, nil
}
