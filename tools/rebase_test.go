package tools

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRebase(t *testing.T) {
	base := lines(30)
	agent := strings.Replace(base, "line 20\n", "line 20 fixed\n", 1)
	user := strings.Replace(base, "line 1\n", "// typed\nline 1\n", 1)
	got, err := Rebase(base, agent, user)
	want := strings.Replace(user, "line 20\n", "line 20 fixed\n", 1)
	if err != nil || got != want {
		t.Fatalf("Rebase = %q, %v", got, err)
	}
	for _, c := range []struct{ name, user string }{
		{"same line", strings.Replace(base, "line 20\n", "line 20 user\n", 1)},
		{"deleted the line", strings.Replace(base, "line 20\n", "", 1)},
		{"inserted at the same place", strings.Replace(base, "line 20\n", "user\nline 20\n", 1)},
	} {
		if got, err := Rebase(base, agent, c.user); !errors.Is(err, ErrOverlap) {
			t.Errorf("%s: Rebase = %q, %v; want ErrOverlap", c.name, got, err)
		}
	}
}

// Property: whatever two changes to disjoint line ranges, the rebase
// keeps both; and it never returns a text missing a line the user wrote.
func TestRebaseProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(4, 40).Draw(t, "n")
		base := lines(n)
		ls := strings.SplitAfter(base, "\n")[:n]
		a := rapid.IntRange(0, n-1).Draw(t, "agentLine")
		u := rapid.IntRange(0, n-1).Draw(t, "userLine")
		agentLs := append([]string(nil), ls...)
		agentLs[a] = "AGENT\n"
		userLs := append([]string(nil), ls...)
		userLs[u] = "USER\n"
		got, err := Rebase(base, strings.Join(agentLs, ""), strings.Join(userLs, ""))
		if a == u || a == u+1 || u == a+1 {
			if err == nil && (!strings.Contains(got, "USER\n") || !strings.Contains(got, "AGENT\n")) {
				t.Fatalf("lines %d/%d: merged %q lost a change", a, u, got)
			}
			return
		}
		both := append([]string(nil), ls...)
		both[a], both[u] = "AGENT\n", "USER\n"
		if err != nil || got != strings.Join(both, "") {
			t.Fatalf("lines %d/%d: Rebase = %q, %v", a, u, got, err)
		}
	})
}
