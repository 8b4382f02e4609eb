package wiregen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// field is one JSON member of a wire type.
type field struct {
	Name string // the JSON name
	Type reflect.Type
	// Optional: omitted when empty (omitempty, omitzero).
	Optional bool
	// Nullable: may be null (a pointer, slice or map without omitempty).
	Nullable bool
	Doc      string
}

// wireType is a named struct type of the wire.
type wireType struct {
	Name   string // its name in the generated files
	Go     reflect.Type
	Doc    string
	Fields []field
}

// universe collects the named struct types reachable from the commands
// and messages, in the order first met, each under one name.
type universe struct {
	docs  *comments
	byGo  map[reflect.Type]*wireType
	names map[string]reflect.Type
	list  []*wireType
}

var (
	marshaler = reflect.TypeFor[json.Marshaler]()
	timeType  = reflect.TypeFor[time.Time]()
)

// custom reports whether t has its own JSON encoding (shown as unknown).
func custom(t reflect.Type) bool {
	return t != timeType && (t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler))
}

// add registers the named struct types t refers to.
func (u *universe) add(t reflect.Type) error {
	if t == nil || custom(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return u.add(t.Elem())
	case reflect.Struct:
	default:
		return nil
	}
	if t == timeType || u.byGo[t] != nil {
		return nil
	}
	if t.Name() == "" {
		fs, err := u.fields(t)
		if err != nil {
			return err
		}
		for _, f := range fs {
			if err := u.add(f.Type); err != nil {
				return err
			}
		}
		return nil
	}
	if err := u.docs.load(t.PkgPath()); err != nil {
		return err
	}
	name := t.Name()
	if other, taken := u.names[name]; taken && other != t {
		pkg := t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:]
		name = strings.ToUpper(pkg[:1]) + pkg[1:] + name
	}
	w := &wireType{Name: name, Go: t, Doc: u.docs.types[t.PkgPath()+"."+t.Name()]}
	u.byGo[t] = w
	u.names[name] = t
	u.list = append(u.list, w)
	fs, err := u.fields(t)
	if err != nil {
		return err
	}
	w.Fields = fs
	for _, f := range fs {
		if err := u.add(f.Type); err != nil {
			return err
		}
	}
	return nil
}

// fields lists a struct's JSON members as encoding/json writes them
// (embedded structs' members promoted, unless a member of t itself has
// their name: the outer one wins, as in encoding/json).
func (u *universe) fields(t reflect.Type) ([]field, error) {
	var out []field
	own := map[string]bool{}
	for i := range t.NumField() {
		if sf := t.Field(i); !sf.Anonymous && sf.IsExported() {
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "" {
				name = sf.Name
			}
			own[name] = true
		}
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				inner, err := u.fields(et)
				if err != nil {
					return nil, err
				}
				for _, f := range inner {
					if !own[f.Name] {
						out = append(out, f)
					}
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		optional := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		k := sf.Type.Kind()
		nullable := !optional && (k == reflect.Pointer || k == reflect.Slice || k == reflect.Map || k == reflect.Interface) && !custom(sf.Type)
		doc := ""
		if t.Name() != "" {
			doc = u.docs.fields[t.PkgPath()+"."+t.Name()+"."+sf.Name]
		}
		out = append(out, field{Name: name, Type: sf.Type, Optional: optional, Nullable: nullable, Doc: doc})
	}
	return out, nil
}

// typeName renders t in a target language.
type lang struct {
	boolean, number, integer, str, unknown string
	array                                  func(elem string) string
	record                                 func(elem string) string
	inline                                 func(fields []string) string
	field                                  func(f field, typ string) string
}

func (u *universe) render(t reflect.Type, l lang) string {
	if t == nil {
		return "null"
	}
	if custom(t) {
		return l.unknown
	}
	if t == timeType {
		return l.str
	}
	switch t.Kind() {
	case reflect.Bool:
		return l.boolean
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return l.integer
	case reflect.Float32, reflect.Float64:
		return l.number
	case reflect.String:
		return l.str
	case reflect.Pointer:
		return u.render(t.Elem(), l)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return l.str // base64
		}
		return l.array(u.render(t.Elem(), l))
	case reflect.Map:
		return l.record(u.render(t.Elem(), l))
	case reflect.Struct:
		if w := u.byGo[t]; w != nil {
			return w.Name
		}
		fs, _ := u.fields(t)
		parts := make([]string, len(fs))
		for i, f := range fs {
			parts[i] = l.field(f, u.render(f.Type, l))
		}
		return l.inline(parts)
	}
	return l.unknown
}

// collect builds the universe of the commands' and messages' types.
func collect(docs *comments, cmds []command, msgs []message) (*universe, error) {
	u := &universe{docs: docs, byGo: map[reflect.Type]*wireType{}, names: map[string]reflect.Type{}}
	for _, c := range cmds {
		if err := u.add(c.Args); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		if err := u.add(c.Result); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	for _, m := range msgs {
		if err := u.add(m.Params); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Method, err)
		}
		if err := u.add(m.Result); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Method, err)
		}
	}
	return u, nil
}
