package elicit

import (
	"fmt"
	"strings"
	"testing"
)

// TestFieldParse: each kind of field reads its value — yes/no words in
// any case, a number or whole number within bounds, a choice by value or
// by its title in any case, a list of choices (empty items skipped, the
// first bad one refused), a string within its length and format.
func TestFieldParse(t *testing.T) {
	two, four := 2, 4
	choice := Field{Name: "c", Type: TypeString, Enum: []string{"a", "b"}, EnumTitles: []string{"Alpha", ""}}
	list := choice
	list.Multiple = true
	str := Field{Name: "s", Type: TypeString, MinLength: &two, MaxLength: &four}
	for _, tc := range []struct {
		f    Field
		in   string
		want string // fmt %v of the value, or "error: " and a part of it
	}{
		{Field{Type: TypeBoolean}, "Yes", "true"},
		{Field{Type: TypeBoolean}, "N", "false"},
		{Field{Type: TypeBoolean}, "0", "false"},
		{Field{Type: TypeBoolean}, "maybe", `error: "maybe" is not yes or no`},
		{Field{Type: TypeInteger}, "42", "42"},
		{Field{Type: TypeInteger}, "4.5", "error: not a whole number"},
		{Field{Type: TypeNumber}, "4.5", "4.5"},
		{choice, "b", "b"},
		{choice, "alpha", "a"},
		{choice, "B ", `error: is not one of`},
		{list, "a, ,Alpha,b", "[a a b]"},
		{list, "a,z", "error: is not one of"},
		{str, "abc", "abc"},
		{str, "a", "error: at least 2 characters, got 1"},
		{str, "abcde", "error: at most 4 characters, got 5"},
		{Field{Type: TypeString, Format: "email"}, "nobody", "error: "},
	} {
		v, err := tc.f.parse(tc.in)
		got := fmt.Sprint(v)
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != tc.want && !(strings.HasPrefix(tc.want, "error: ") && strings.Contains(got, strings.TrimPrefix(tc.want, "error: ")) && err != nil) {
			t.Errorf("%+v parse %q: %s, want %s", tc.f, tc.in, got, tc.want)
		}
	}
}
