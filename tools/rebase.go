package tools

import (
	"errors"
	"fmt"

	udiff "github.com/aymanbagabas/go-udiff"
)

// ErrOverlap is wrapped by Rebase when the agent's change and the
// user's change touch the same lines.
var ErrOverlap = errors.New("the user changed the same lines")

// maxRebaseText bounds the texts the read tracker keeps for rebasing.
const maxRebaseText = 1 << 20

// Rebase moves the agent's change of base (base -> ours) onto theirs,
// base as someone else (the user typing, another process) changed it
// meanwhile: a three-way merge by lines, as the commit does. It fails with
// ErrOverlap when the two changes touch the same lines (or insert at the
// same place), so that nothing the user wrote is lost or mixed.
func Rebase(base, ours, theirs string) (string, error) {
	if theirs == base {
		return ours, nil
	}
	if ours == base {
		return theirs, nil
	}
	agent := udiff.Lines(base, ours)
	user := udiff.Lines(base, theirs)
	for _, a := range agent {
		for _, u := range user {
			if a.Start < u.End && u.Start < a.End || a.Start == u.Start || a.End == u.Start && a.Start == a.End || u.End == a.Start && u.Start == u.End {
				return "", fmt.Errorf("%w (line %d)", ErrOverlap, lineOf(base, a.Start))
			}
		}
	}
	merged, ok := udiff.Merge(agent, user)
	if !ok {
		return "", ErrOverlap
	}
	return udiff.Apply(base, merged)
}

func lineOf(text string, off int) int {
	n := 1
	for i := 0; i < off && i < len(text); i++ {
		if text[i] == '\n' {
			n++
		}
	}
	return n
}
