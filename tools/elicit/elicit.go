package elicit

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Modes of a request.
const (
	ModeForm = "form"
	ModeURL  = "url"
)

// Actions of an answer, as the MCP specification names them.
const (
	Accept  = "accept"
	Decline = "decline"
	Cancel  = "cancel"
)

// Mask is what is shown in place of a sensitive value.
const Mask = "••••••"

// Field types.
const (
	TypeString  = "string"
	TypeNumber  = "number"
	TypeInteger = "integer"
	TypeBoolean = "boolean"
)

// Field is one field of a form.
type Field struct {
	// Name is the property's name: the key of the value sent back.
	Name string `json:"name"`
	// Title is the schema's title, "" when it has none (show Name).
	Title string `json:"title,omitempty"`
	// Description is the schema's description.
	Description string `json:"description,omitempty"`
	// Type is string, number, integer or boolean; an enum is a string
	// whose Enum is set.
	Type string `json:"type"`
	// Multiple: the field takes several of Enum (a multi-select, schema
	// type "array"); typed comma-separated, sent as a list.
	Multiple bool `json:"multiple,omitempty"`
	// Enum is the values a string field may take, in the server's order;
	// empty for free text.
	Enum []string `json:"enum,omitempty"`
	// EnumTitles, when set, has one display name per Enum value.
	EnumTitles []string `json:"enumTitles,omitempty"`
	// Format is the schema's string format (email, uri, date, date-time,
	// password).
	Format string `json:"format,omitempty"`
	// Required: the answer must have a value for it.
	Required bool `json:"required,omitempty"`
	// Default is the schema's default as text ("true", "3", "us-east");
	// set only when HasDefault.
	Default string `json:"default,omitempty"`
	// HasDefault tells a default of "" from none.
	HasDefault bool `json:"hasDefault,omitempty"`
	// Secret: the value is masked wherever it is shown and never
	// journaled or logged (Sensitive).
	Secret bool `json:"secret,omitempty"`
	// MinLength and MaxLength bound a string's length in characters;
	// Minimum and Maximum bound a number. Nil: no bound.
	MinLength *int     `json:"minLength,omitempty"`
	MaxLength *int     `json:"maxLength,omitempty"`
	Minimum   *float64 `json:"minimum,omitempty"`
	Maximum   *float64 `json:"maximum,omitempty"`
}

// Label is the field's name for a person: its title, else its name.
func (f Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// Request is a server's question.
type Request struct {
	// Server is the MCP server's name in loom's configuration.
	Server string `json:"server"`
	// Message is the server's text for the user.
	Message string `json:"message"`
	// Mode is "form" or "url".
	Mode string `json:"mode"`
	// URL is the page to open (url mode); loom never opens it itself.
	URL string `json:"url,omitempty"`
	// ElicitationID is the server's id of a url-mode request.
	ElicitationID string `json:"elicitationId,omitempty"`
	// Fields is the form (form mode), in the schema's order.
	Fields []Field `json:"fields,omitempty"`
}

// Answer is what the user gave: an action, and for accept the text typed
// for each field (by name; a field left out or "" takes its default).
type Answer struct {
	Action string            `json:"action"`
	Values map[string]string `json:"values,omitempty"`
}

// Result is what goes back to the server.
type Result struct {
	Action string
	// Content is the checked values of an accepted form, typed as the
	// schema says.
	Content map[string]any
}

// ShownValue is one sent value as it may be shown: masked when secret.
type ShownValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Sensitive reports whether a field's value is a secret: format
// "password", or a name one of whose words is token, secret, key,
// password, passwd, pwd, passphrase, pin, otp, credential(s) or apikey
// ("apiKey", "api_key", "GITHUB_TOKEN", "clientSecret").
func Sensitive(name, format string) bool {
	if strings.EqualFold(format, "password") {
		return true
	}
	for _, w := range words(name) {
		switch w {
		case "token", "secret", "key", "password", "passwd", "pwd", "passphrase", "pin", "otp",
			"credential", "credentials", "apikey", "accesstoken", "privatekey":
			return true
		}
	}
	return false
}

// words splits a name at non-letters and lower-to-upper case changes,
// lowered.
func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range name {
		isLetter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		switch {
		case !isLetter:
			flush()
		case r >= 'A' && r <= 'Z' && prev >= 'a' && prev <= 'z':
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// schemaProp is the part of a property's JSON schema a form reads.
type schemaProp struct {
	Type        any      `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Enum        []any    `json:"enum"`
	EnumNames   []string `json:"enumNames"`
	OneOf       []struct {
		Const any    `json:"const"`
		Title string `json:"title"`
	} `json:"oneOf"`
	Format string      `json:"format"`
	Items  *schemaProp `json:"items"`
	AnyOf  []struct {
		Const any    `json:"const"`
		Title string `json:"title"`
	} `json:"anyOf"`
	Default   json.RawMessage `json:"default"`
	MinLength *int            `json:"minLength"`
	MaxLength *int            `json:"maxLength"`
	Minimum   *float64        `json:"minimum"`
	Maximum   *float64        `json:"maximum"`
}

// Fields reads a requested schema (any value that marshals to the
// schema's JSON) into a form: the required fields first, in the order of
// "required", then the others in the order of the JSON text. (A schema
// that went through a Go map, as the go-sdk client hands it over, has
// its properties sorted by name.)
func Fields(schema any) ([]Field, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	var s struct {
		Properties map[string]schemaProp `json:"properties"`
		Required   []string              `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := propertyOrder(raw, s.Required, s.Properties)
	fields := make([]Field, 0, len(names))
	for _, name := range names {
		f, err := field(name, s.Properties[name])
		if err != nil {
			return nil, err
		}
		f.Required = required[name]
		fields = append(fields, f)
	}
	return fields, nil
}

func field(name string, p schemaProp) (Field, error) {
	f := Field{Name: name, Title: p.Title, Description: p.Description, Format: p.Format,
		MinLength: p.MinLength, MaxLength: p.MaxLength, Minimum: p.Minimum, Maximum: p.Maximum}
	if t, ok := p.Type.(string); ok {
		f.Type = t
	}
	if f.Type == "array" && p.Items != nil {
		f.Type, f.Multiple = TypeString, true
		p.Enum, p.EnumNames, p.OneOf = p.Items.Enum, p.Items.EnumNames, p.Items.AnyOf
	}
	for _, e := range p.Enum {
		f.Enum = append(f.Enum, fmt.Sprint(e))
	}
	if len(p.EnumNames) == len(f.Enum) {
		f.EnumTitles = p.EnumNames
	}
	if len(f.Enum) == 0 {
		for _, o := range p.OneOf {
			f.Enum = append(f.Enum, fmt.Sprint(o.Const))
			f.EnumTitles = append(f.EnumTitles, o.Title)
		}
	}
	if f.Type == "" {
		f.Type = TypeString
	}
	if f.Multiple && len(f.Enum) == 0 {
		return Field{}, fmt.Errorf("field %q: a list without choices cannot be asked in a form", name)
	}
	switch f.Type {
	case TypeString, TypeNumber, TypeInteger, TypeBoolean:
	default:
		return Field{}, fmt.Errorf("field %q: type %q cannot be asked in a form", name, f.Type)
	}
	if len(p.Default) > 0 && string(p.Default) != "null" {
		var v any
		_ = json.Unmarshal(p.Default, &v)
		f.Default, f.HasDefault = text(v), true
	}
	f.Secret = Sensitive(name, p.Format)
	return f, nil
}

// text is a JSON value as the user would type it.
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = text(x)
		}
		return strings.Join(parts, ", ")
	case []string:
		return strings.Join(v, ", ")
	case float64:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%f", v), "0"), ".")
	default:
		return fmt.Sprint(v)
	}
}

// propertyOrder returns the property names: the required ones, then the
// others in the order of the schema's JSON text, those it cannot place
// sorted after.
func propertyOrder(raw []byte, required []string, props map[string]schemaProp) []string {
	var top map[string]json.RawMessage
	_ = json.Unmarshal(raw, &top)
	var order []string
	seen := map[string]bool{}
	for _, k := range required {
		if _, ok := props[k]; ok && !seen[k] {
			order, seen[k] = append(order, k), true
		}
	}
	if p, ok := top["properties"]; ok {
		dec := json.NewDecoder(strings.NewReader(string(p)))
		if t, err := dec.Token(); err == nil && t == json.Delim('{') {
			for dec.More() {
				t, err := dec.Token()
				if err != nil {
					break
				}
				k, _ := t.(string)
				if _, ok := props[k]; ok && !seen[k] {
					order, seen[k] = append(order, k), true
				}
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
				}
			}
		}
	}
	var rest []string
	for k := range props {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(order, rest...)
}
