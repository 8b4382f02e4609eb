package elicit

import (
	"reflect"
	"strings"
	"testing"
)

func TestSensitive(t *testing.T) {
	for name, want := range map[string]bool{
		"api_token": true, "apiKey": true, "GITHUB_TOKEN": true, "clientSecret": true, "password": true, "pin": true,
		"monkey": false, "keyboard_layout": false, "tokens_used": false, "name": false, "env": false,
	} {
		if got := Sensitive(name, ""); got != want {
			t.Errorf("Sensitive(%q) = %v, want %v", name, got, want)
		}
	}
	if !Sensitive("code", "password") {
		t.Error(`format "password" is not sensitive`)
	}
}

// The form read from a schema, and answers checked against it: defaults
// fill what is left empty, each problem names its field, a secret is
// never quoted, and Shown masks it.
func TestFieldsAndCheck(t *testing.T) {
	fields, err := Fields(map[string]any{
		"type": "object", "required": []any{"env", "api_key"},
		"properties": map[string]any{
			"env":     map[string]any{"type": "string", "title": "Environment", "oneOf": []any{map[string]any{"const": "prod", "title": "Production"}, map[string]any{"const": "dev", "title": "Dev"}}},
			"api_key": map[string]any{"type": "string", "minLength": 4},
			"port":    map[string]any{"type": "integer", "minimum": 1, "maximum": 65535, "default": 8080},
			"ratio":   map[string]any{"type": "number"},
			"on":      map[string]any{"type": "boolean", "default": false},
			"email":   map[string]any{"type": "string", "format": "email"},
			"tags":    map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"a", "b"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := Request{Fields: fields}
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "env,api_key,email,on,port,ratio,tags" || !fields[1].Secret || fields[0].Secret || !fields[6].Multiple {
		t.Fatalf("fields %+v", fields)
	}
	content, problems := r.Check(map[string]string{"env": "production", "api_key": "abcd", "ratio": "0.5", "tags": "a, b", "unknown": "x"})
	want := map[string]any{"env": "prod", "api_key": "abcd", "port": int64(8080), "ratio": 0.5, "on": false, "tags": []string{"a", "b"}}
	if len(problems) != 0 || !reflect.DeepEqual(content, want) {
		t.Errorf("Check = %v %q, want %v", content, problems, want)
	}
	_, problems = r.Check(map[string]string{"env": "qa", "api_key": "xyz", "port": "70000", "ratio": "half", "on": "maybe", "email": "nope", "tags": "c"})
	wantProblems := []string{
		`Environment: "qa" is not one of prod (Production), dev (Dev)`,
		"api_key: at least 4 characters, got 3",
		`email: "nope" is not an email address`,
		`on: "maybe" is not yes or no (true/false)`,
		"port: 70000 is above the maximum 65535",
		`ratio: "half" is not a number`,
		`tags: "c" is not one of a, b`,
	}
	if !reflect.DeepEqual(problems, wantProblems) {
		t.Errorf("problems\n%q\nwant\n%q", problems, wantProblems)
	}
	_, problems = r.Check(nil)
	if strings.Join(problems, "|") != "Environment: a value is required|api_key: a value is required" {
		t.Errorf("empty answer: %q", problems)
	}
	shown := r.Shown(map[string]any{"env": "prod", "api_key": "abcd", "port": int64(1)})
	if !reflect.DeepEqual(shown, []ShownValue{{"env", "prod"}, {"api_key", Mask}, {"port", "1"}}) {
		t.Errorf("Shown = %v", shown)
	}
	if kept := r.Kept(map[string]string{"env": "qa", "api_key": "xyz"}); !reflect.DeepEqual(kept, map[string]string{"env": "qa"}) {
		t.Errorf("Kept = %v", kept)
	}
	if _, missing := r.Defaults(); strings.Join(missing, ",") != "env,api_key" {
		t.Errorf("Defaults missing %v", missing)
	}
	if _, err := Fields(map[string]any{"properties": map[string]any{"o": map[string]any{"type": "object"}}}); err == nil {
		t.Error("an object field was taken")
	}
}
