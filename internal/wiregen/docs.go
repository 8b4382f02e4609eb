package wiregen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// comments holds the doc comments of a module's types, their fields and
// its string constants, read from the source.
type comments struct {
	root, module string
	// types: "pkgpath.Type" -> doc; fields: "pkgpath.Type.Field" -> doc.
	types, fields map[string]string
	// consts: a string constant's value ("loom.ask") -> its doc.
	consts map[string]string
	loaded map[string]bool
}

func newComments(root string) (*comments, error) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	module := ""
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			module = f[1]
			break
		}
	}
	return &comments{root: root, module: module, types: map[string]string{}, fields: map[string]string{},
		consts: map[string]string{}, loaded: map[string]bool{}}, nil
}

// load reads the comments of package pkg, if it is the module's.
func (c *comments) load(pkg string) error {
	if c.loaded[pkg] || (pkg != c.module && !strings.HasPrefix(pkg, c.module+"/")) {
		return nil
	}
	c.loaded[pkg] = true
	dir := filepath.Join(c.root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(pkg, c.module), "/")))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok {
				c.decl(pkg, g)
			}
		}
	}
	return nil
}

func (c *comments) decl(pkg string, g *ast.GenDecl) {
	for _, spec := range g.Specs {
		switch s := spec.(type) {
		case *ast.TypeSpec:
			doc := s.Doc
			if doc == nil && len(g.Specs) == 1 {
				doc = g.Doc
			}
			key := pkg + "." + s.Name.Name
			c.types[key] = text(doc)
			if st, ok := s.Type.(*ast.StructType); ok {
				for _, f := range st.Fields.List {
					d := text(f.Doc)
					if d == "" {
						d = text(f.Comment)
					}
					for _, n := range f.Names {
						c.fields[key+"."+n.Name] = d
					}
				}
			}
		case *ast.ValueSpec:
			if g.Tok != token.CONST || len(s.Values) != len(s.Names) {
				continue
			}
			for _, v := range s.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				val, err := strconv.Unquote(lit.Value)
				if err != nil || !(strings.HasPrefix(val, "loom.") || strings.HasPrefix(val, "loom/")) {
					continue
				}
				if d := text(s.Doc); d != "" {
					c.consts[val] = d
				}
			}
		}
	}
}

// text is a comment group's text on one line per paragraph.
func text(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	var paras []string
	for _, p := range strings.Split(strings.TrimSpace(g.Text()), "\n\n") {
		paras = append(paras, strings.Join(strings.Fields(p), " "))
	}
	return strings.Join(paras, "\n\n")
}
