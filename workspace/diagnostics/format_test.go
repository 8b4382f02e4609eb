package diagnostics

import (
	"strings"
	"testing"
)

// TestFormat: what the model reads after a batch of edits — errors first
// and sorted by place (a warning only counted beside them), warnings
// listed alone when few enough, infos below the minimum dropped, the
// items and bytes capped with "(N more not listed)", clean files and
// unavailable diagnostics said after.
func TestFormat(t *testing.T) {
	lim := Limits{MinSeverity: SeverityWarning, MaxWarnings: 2, MaxItems: 10, MaxBytes: 4096}
	d := func(path string, line int, sev Severity, msg string) Diagnostic {
		return Diagnostic{Path: "/w/" + path, Line: line, Col: 1, Severity: sev, Message: msg, Source: "vet"}
	}
	warn2 := Report{Path: "w.go", New: []Diagnostic{d("w.go", 9, SeverityWarning, "w9"), d("w.go", 3, SeverityWarning, "w3")}}
	mixed := Report{Path: "b.go", New: []Diagnostic{d("b.go", 5, 0, "no\nsev"), d("b.go", 2, SeverityError, "e2"), d("b.go", 1, SeverityWarning, "w1"), d("b.go", 1, SeverityInfo, "i1")}}
	info := Report{Path: "c.go", New: []Diagnostic{d("c.go", 1, SeverityInfo, "i")}}
	gone := Report{Path: "d.go", Unavailable: "gopls did not answer in time"}
	for _, tc := range []struct {
		name    string
		reports []Report
		lim     Limits
		want    string
	}{
		{"none", nil, lim, ""},
		{"errors first", []Report{info, mixed, gone}, lim, `[loom] the language server reports 2 new errors and 1 new warning after these edits:
b.go:2:1: error: e2 (vet)
b.go:5:1: error: no … (vet)
(1 more not listed)
[loom] no new problems in c.go
[loom] diagnostics were not available for d.go (gopls did not answer in time): whether these edits introduced problems there is not known`},
		{"warnings alone", []Report{warn2}, lim, `[loom] the language server reports 2 new warnings after these edits:
w.go:3:1: warning: w3 (vet)
w.go:9:1: warning: w9 (vet)`},
		{"too many warnings", []Report{warn2}, Limits{MinSeverity: SeverityWarning, MaxWarnings: 1, MaxItems: 10, MaxBytes: 4096},
			"[loom] the language server reports 2 new warnings after these edits:\n(2 more not listed)"},
		{"items capped", []Report{warn2}, Limits{MinSeverity: SeverityWarning, MaxWarnings: 2, MaxItems: 1, MaxBytes: 4096},
			"[loom] the language server reports 2 new warnings after these edits:\nw.go:3:1: warning: w3 (vet)\n(1 more not listed)"},
		{"bytes capped", []Report{warn2}, Limits{MinSeverity: SeverityWarning, MaxWarnings: 2, MaxItems: 10, MaxBytes: 90},
			"[loom] the language server reports 2 new warnings after these edits:\n(2 more not listed)"},
	} {
		if got := Format(tc.reports, tc.lim); got != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.name, got, tc.want)
		}
	}
	if !strings.Contains(Format([]Report{info}, Limits{MinSeverity: SeverityInfo, MaxWarnings: 2, MaxItems: 10, MaxBytes: 4096}), "c.go:1:1: info: i") {
		t.Error("an info at the minimum severity info is not listed")
	}
}
