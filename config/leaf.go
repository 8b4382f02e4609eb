package config

import (
	"encoding"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// set sets the leaf field f to val, checking its type; the key's origin
// is recorded when it was set.
func (a *applier) set(f reflect.Value, val any, key []string) {
	var ok bool
	switch {
	case selfDecoding(f):
		ok = a.setDecoded(f, val, key)
	case f.Kind() == reflect.Slice: // []string
		ok = a.setStrings(f, val, key)
	case f.Kind() == reflect.Map: // map[string]string
		ok = a.setStringMap(f, val, key)
	default:
		ok = a.setScalar(f, val, key)
	}
	if ok {
		a.record(strings.Join(key, "."), key)
	}
}

// wrongType reports that val at key is not what the key wants.
func (a *applier) wrongType(key []string, want string, val any) {
	a.fail(key, "%s: want %s, got %s", strings.Join(key, "."), want, describe(val))
}

// selfDecoding reports whether f's type decodes its own values: a
// configValue, or a TextUnmarshaler given a string (a duration).
func selfDecoding(f reflect.Value) bool {
	if _, ok := addrOf(f).(configValue); ok {
		return true
	}
	return f.CanAddr() && f.Addr().Type().Implements(textUnmarshaler)
}

// setDecoded sets a field whose type decodes its own values.
func (a *applier) setDecoded(f reflect.Value, val any, key []string) bool {
	var err error
	if cv, ok := addrOf(f).(configValue); ok {
		err = cv.setConfigValue(val)
	} else {
		s, ok := val.(string)
		if !ok {
			a.wrongType(key, `a string such as "30s"`, val)
			return false
		}
		err = f.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
	}
	if err != nil {
		a.fail(key, "%s: %v", strings.Join(key, "."), err)
		return false
	}
	return true
}

// setScalar sets a string, boolean, integer or number field (or a
// *float64, an optional number). A relative model.script is taken from
// the directory of the file that names it.
func (a *applier) setScalar(f reflect.Value, val any, key []string) bool {
	switch f.Kind() {
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			a.wrongType(key, "a string", val)
			return false
		}
		if strings.Join(key, ".") == "model.script" && s != "" && a.baseDir != "" && !filepath.IsAbs(s) {
			s = filepath.Join(a.baseDir, s)
		}
		f.SetString(s)
	case reflect.Bool:
		b, ok := val.(bool)
		if !ok {
			a.wrongType(key, "a boolean", val)
			return false
		}
		f.SetBool(b)
	case reflect.Int:
		n, ok := toInt(val)
		if !ok {
			a.wrongType(key, "an integer", val)
			return false
		}
		f.SetInt(n)
	case reflect.Float64, reflect.Pointer:
		x, ok := toFloat(val)
		if !ok {
			a.wrongType(key, "a number", val)
			return false
		}
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.ValueOf(&x))
		} else {
			f.SetFloat(x)
		}
	default:
		panic("config: unsupported field type " + f.Type().String())
	}
	return true
}

// setStrings sets a []string field from an array of strings.
func (a *applier) setStrings(f reflect.Value, val any, key []string) bool {
	arr, ok := val.([]any)
	if !ok {
		a.wrongType(key, "an array of strings", val)
		return false
	}
	var out []string
	for i, v := range arr {
		s, ok := v.(string)
		if !ok {
			a.fail(key, "%s[%d]: want a string, got %s", strings.Join(key, "."), i, describe(v))
			return false
		}
		out = append(out, s)
	}
	f.Set(reflect.ValueOf(out))
	return true
}

// setStringMap sets the entries of a map[string]string field from a
// table of strings, each entry with its own origin; an entry that is not
// a string is reported and left out.
func (a *applier) setStringMap(f reflect.Value, val any, key []string) bool {
	m, ok := val.(map[string]any)
	if !ok {
		a.wrongType(key, "a table of strings", val)
		return false
	}
	if f.IsNil() {
		f.Set(reflect.MakeMap(f.Type()))
	}
	name := strings.Join(key, ".")
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s, ok := m[k].(string)
		if !ok {
			a.fail(append(slices.Clip(key), k), "%s.%s: want a string, got %s", name, k, describe(m[k]))
			continue
		}
		f.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(s))
		a.record(name+"."+k, append(slices.Clip(key), k))
	}
	return true
}
