package elicit

import (
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Check checks what the user typed against the form. It returns the
// content to send, typed as the schema says (a field left empty takes
// its default, or is left out when it has none and is not required), and
// one problem per field that does not fit, in the form's order, each
// naming the field ("Port: 70000 is above the maximum 65535"). Values of
// names the form does not have are ignored.
func (r Request) Check(values map[string]string) (content map[string]any, problems []string) {
	content = map[string]any{}
	for _, f := range r.Fields {
		v := strings.TrimSpace(values[f.Name])
		if f.Secret || f.Type == TypeString && len(f.Enum) == 0 {
			v = values[f.Name] // a password's or a text's spaces are its own
			if strings.TrimSpace(v) == "" {
				v = ""
			}
		}
		if v == "" {
			if !f.HasDefault {
				if f.Required {
					problems = append(problems, f.Label()+": a value is required")
				}
				continue
			}
			v = f.Default
		}
		val, err := f.parse(v)
		if err != nil {
			problems = append(problems, f.Label()+": "+err.Error())
			continue
		}
		content[f.Name] = val
	}
	return content, problems
}

// Defaults is the content of an answer that accepts every default: what
// loom sends when the user (exec --elicit defaults, a client that can only
// say yes or no) accepts without typing. missing names the required
// fields that have no default: such a form cannot be accepted so.
func (r Request) Defaults() (content map[string]any, missing []string) {
	content = map[string]any{}
	for _, f := range r.Fields {
		if !f.HasDefault {
			if f.Required {
				missing = append(missing, f.Name)
			}
			continue
		}
		if v, err := f.parse(f.Default); err == nil {
			content[f.Name] = v
		} else if f.Required {
			missing = append(missing, f.Name)
		}
	}
	return content, missing
}

// parse reads one typed value.
func (f Field) parse(v string) (any, error) {
	switch {
	case f.Type == TypeBoolean:
		return parseBoolean(v)
	case f.Type == TypeNumber || f.Type == TypeInteger:
		return f.parseNumber(v)
	case f.Multiple:
		return f.parseList(v)
	case len(f.Enum) > 0:
		return f.parseChoice(v)
	}
	return f.parseString(v)
}

// booleanWords are the answers a boolean field takes, lower-cased.
var booleanWords = map[string]bool{
	"true": true, "yes": true, "y": true, "on": true, "1": true,
	"false": false, "no": false, "n": false, "off": false, "0": false,
}

// parseBoolean reads a yes or no.
func parseBoolean(v string) (any, error) {
	if b, ok := booleanWords[strings.ToLower(v)]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("%q is not yes or no (true/false)", v)
}

// parseList reads a comma-separated list of values, each one checked as
// the field's single value; empty items are skipped.
func (f Field) parseList(v string) (any, error) {
	one := f
	one.Multiple = false
	var out []string
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		x, err := one.parse(part)
		if err != nil {
			return nil, err
		}
		out = append(out, x.(string))
	}
	return out, nil
}

// parseChoice reads one of the field's choices: its value, or its title
// in any case.
func (f Field) parseChoice(v string) (any, error) {
	for i, e := range f.Enum {
		if v == e || i < len(f.EnumTitles) && f.EnumTitles[i] != "" && strings.EqualFold(v, f.EnumTitles[i]) {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%q is not one of %s", f.show(v), strings.Join(f.choices(), ", "))
}

// parseString checks a string's length and format.
func (f Field) parseString(v string) (any, error) {
	n := utf8.RuneCountInString(v)
	if f.MinLength != nil && n < *f.MinLength {
		return nil, fmt.Errorf("at least %d characters, got %d", *f.MinLength, n)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return nil, fmt.Errorf("at most %d characters, got %d", *f.MaxLength, n)
	}
	if err := checkFormat(f.Format, v); err != nil {
		return nil, fmt.Errorf("%q %w", f.show(v), err)
	}
	return v, nil
}

func (f Field) parseNumber(v string) (any, error) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, fmt.Errorf("%q is not a number", f.show(v))
	}
	if f.Type == TypeInteger && x != math.Trunc(x) {
		return nil, fmt.Errorf("%q is not a whole number", f.show(v))
	}
	if f.Minimum != nil && x < *f.Minimum {
		return nil, fmt.Errorf("%s is below the minimum %s", f.show(v), text(*f.Minimum))
	}
	if f.Maximum != nil && x > *f.Maximum {
		return nil, fmt.Errorf("%s is above the maximum %s", f.show(v), text(*f.Maximum))
	}
	if f.Type == TypeInteger {
		return int64(x), nil
	}
	return x, nil
}

// show is a typed value as a problem may quote it: masked when secret.
func (f Field) show(v string) string {
	if f.Secret {
		return Mask
	}
	return v
}

// choices lists an enum's values for a problem: "prod (Production)".
func (f Field) choices() []string {
	out := make([]string, len(f.Enum))
	for i, e := range f.Enum {
		out[i] = e
		if i < len(f.EnumTitles) && f.EnumTitles[i] != "" && f.EnumTitles[i] != e {
			out[i] += " (" + f.EnumTitles[i] + ")"
		}
	}
	return out
}

func checkFormat(format, v string) error {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
			return fmt.Errorf("is not an email address")
		}
	case "uri":
		if u, err := url.Parse(v); err != nil || u.Scheme == "" {
			return fmt.Errorf("is not a URI (scheme:…)")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return fmt.Errorf("is not a date (YYYY-MM-DD)")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return fmt.Errorf("is not a date and time (RFC 3339, 2026-12-07T21:00:00Z)")
		}
	}
	return nil
}

// Shown is the content as it may be shown or journaled, in the form's
// order: a secret field's value is Mask.
func (r Request) Shown(content map[string]any) []ShownValue {
	var out []ShownValue
	for _, f := range r.Fields {
		v, ok := content[f.Name]
		if !ok {
			continue
		}
		s := text(v)
		if f.Secret {
			s = Mask
		}
		out = append(out, ShownValue{Name: f.Name, Value: s})
	}
	return out
}

// Kept is what of an answer is handed back when the form is asked again:
// every value but the secrets' (nothing typed is lost, and no secret
// travels twice).
func (r Request) Kept(values map[string]string) map[string]string {
	out := map[string]string{}
	for _, f := range r.Fields {
		if v, ok := values[f.Name]; ok && !f.Secret {
			out[f.Name] = v
		}
	}
	return out
}
