package review

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

const base = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"

func TestSplitGivesOneHunkPerChangedRun(t *testing.T) {
	agent := strings.Replace(strings.Replace(base, "b\n", "B\n", 1), "i\n", "I\nI2\n", 1)
	c := Split("x.txt", base, agent, false, 1)
	if got := c.HunkIDs(); strings.Join(got, ",") != "1,2" {
		t.Fatalf("hunks %v, want 1,2", got)
	}
	h := c.File.Hunks
	if h[0].StartLine != 1 || h[0].EndLine != 2 || h[1].StartLine != 8 || h[1].EndLine != 9 {
		t.Fatalf("ranges %+v", h)
	}
	if !strings.HasPrefix(h[1].Diff, "@@ -6,5 +6,6 @@") || !strings.Contains(h[1].Diff, "+I2\n") || strings.Contains(h[1].Diff, "+B") {
		t.Fatalf("hunk 2 diff:\n%s", h[1].Diff)
	}
	if !strings.HasPrefix(c.File.Diff, "--- a/x.txt\n+++ b/x.txt\n") {
		t.Fatalf("file diff:\n%s", c.File.Diff)
	}
}

func TestApplySubsetKeepsTheUsersTyping(t *testing.T) {
	agent := strings.Replace(strings.Replace(base, "b\n", "B\n", 1), "i\n", "I\n", 1)
	c := Split("x.txt", base, agent, false, 1)
	// Meanwhile the user typed on line e.
	current := strings.Replace(base, "e\n", "e typed\n", 1)
	res, err := c.Apply(current, []string{"2"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(current, "i\n", "I\n", 1)
	if res.Text != want || strings.Join(res.Applied, ",") != "2" || len(res.Conflicts) != 0 {
		t.Fatalf("got %q applied %v conflicts %v, want %q", res.Text, res.Applied, res.Conflicts, want)
	}
}

func TestApplyLeavesOutAHunkTheUserAlsoChanged(t *testing.T) {
	agent := strings.Replace(strings.Replace(base, "b\n", "B\n", 1), "i\n", "I\n", 1)
	c := Split("x.txt", base, agent, false, 1)
	current := strings.Replace(base, "b\n", "b by hand\n", 1)
	res, err := c.Apply(current, []string{"1", "2"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Conflicts, ",") != "1" || strings.Join(res.Applied, ",") != "2" {
		t.Fatalf("applied %v conflicts %v", res.Applied, res.Conflicts)
	}
	if res.Text != strings.Replace(current, "i\n", "I\n", 1) {
		t.Fatalf("text %q", res.Text)
	}
}

// TestApplyProperty: for any agent change split into hunks and any subset
// accepted, with no user typing, the result is exactly the old text with
// those hunks; accepting all gives the agent's text, none the old text.
func TestApplyProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Lines are unique, so that every diff of them is unambiguous.
		n := rapid.IntRange(0, 12).Draw(t, "n")
		var oldLines, newLines []string
		for i := 0; i < n; i++ {
			l := fmt.Sprintf("l%d\n", i)
			oldLines = append(oldLines, l)
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0:
				newLines = append(newLines, fmt.Sprintf("changed %d\n", i))
			case 1: // deleted
			case 2:
				newLines = append(newLines, fmt.Sprintf("inserted %d\n", i), l)
			default:
				newLines = append(newLines, l)
			}
		}
		old, agent := strings.Join(oldLines, ""), strings.Join(newLines, "")
		c := Split("f", old, agent, false, 1)
		ids := c.HunkIDs()
		all, err := c.Apply(old, ids)
		if err != nil || all.Text != agent || len(all.Conflicts) != 0 {
			t.Fatalf("accept all: %q %v %v, want %q", all.Text, all.Conflicts, err, agent)
		}
		none, err := c.Apply(old, nil)
		if err != nil || none.Text != old {
			t.Fatalf("accept none: %q %v, want %q", none.Text, err, old)
		}
		// Accepting a subset then the rest, each three-way over the text
		// the first gave, ends at the agent's text.
		var first, rest []string
		for _, id := range ids {
			if rapid.Bool().Draw(t, "take"+id) {
				first = append(first, id)
			} else {
				rest = append(rest, id)
			}
		}
		mid, err := c.Apply(old, first)
		if err != nil {
			t.Fatal(err)
		}
		end, err := c.Apply(mid.Text, rest)
		if err != nil {
			t.Fatal(err)
		}
		if len(end.Conflicts) != 0 || end.Text != agent {
			t.Fatalf("subset %v then %v gave %q, want %q", first, rest, end.Text, agent)
		}
	})
}

// TestApplyConflictsOnTwoInsertionsAtOnePoint: the agent and the user
// both inserted after the same line; their order cannot be told, so the
// agent's hunk is left out, as git would call it a conflict.
func TestApplyConflictsOnTwoInsertionsAtOnePoint(t *testing.T) {
	c := Split("x.txt", "a\nb\n", "a\nagent\nb\n", false, 1)
	res, err := c.Apply("a\nuser\nb\n", []string{"1"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Conflicts, ",") != "1" || res.Text != "a\nuser\nb\n" {
		t.Fatalf("got %q conflicts %v", res.Text, res.Conflicts)
	}
}
