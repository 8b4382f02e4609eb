package config

import "testing"

// TestStripJSONCCases: comments become blanks with their line breaks kept,
// trailing commas blanks, strings (with what looks like comments and
// escaped quotes) are kept whole, unterminated ones run to the end.
func TestStripJSONCCases(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a": 1, // one` + "\n" + `"b": [2,],}`, `{"a": 1,       ` + "\n" + `"b": [2 ] }`},
		{`{"u": "http://x/*y*/\"", /* a` + "\n" + `b */ "c": 3}`, `{"u": "http://x/*y*/\"",     ` + "\n" + `     "c": 3}`},
		{`[1 , ` + "\t\r\n" + ` ]`, `[1   ` + "\t\r\n" + ` ]`},
		{`{"open": "no end`, `{"open": "no end`},
		{`1 /* no end` + "\n", `1          ` + "\n"},
		{`"\`, `"\`},
		{`// last`, `       `},
	} {
		if got := string(stripJSONC([]byte(c.in))); got != c.want {
			t.Errorf("stripJSONC(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
