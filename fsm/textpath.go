package fsm

import "unsafe"

// displaySlabSize is how many text-path steps share one allocation.
const displaySlabSize = 64

// displaySlab hands out the result of an LlmTextDelta step — a
// one-element []Action holding a DisplayMessage — without allocating per
// step: both the DisplayMessage values and the one-element slices are cut
// from arrays allocated displaySlabSize at a time, so streaming costs no
// allocation per chunk (issue 16 item 3).
//
// Each slab element is written exactly once, before it is handed out, and
// never again: an action returned by Step stays valid and unchanged for as
// long as the caller keeps it, as with any other action. A slab lives
// until the last action cut from it is dropped.
type displaySlab struct {
	msgs []DisplayMessage
	acts []Action
}

// ifaceWords is the memory layout of a non-empty interface value: its
// itab and a pointer to the (immutable) value. Go's interfaces have had
// this layout since Go 1.0; TestDisplaySlabActionsAreValues checks that an
// action built on it reads back as an ordinary DisplayMessage.
type ifaceWords struct {
	tab  unsafe.Pointer
	data unsafe.Pointer
}

// displayMessageTab is the itab of (Action, DisplayMessage). Converting
// the zero value does not allocate.
var displayMessageTab = func() unsafe.Pointer {
	var a Action = DisplayMessage{}
	return (*ifaceWords)(unsafe.Pointer(&a)).tab
}()

// display returns []Action{DisplayMessage{Turn: turn, Text: text}}, with
// capacity 1 (an append by the caller copies).
func (s *displaySlab) display(turn uint64, text string) []Action {
	if len(s.msgs) == 0 {
		s.msgs = make([]DisplayMessage, displaySlabSize)
		s.acts = make([]Action, displaySlabSize)
	}
	msg := &s.msgs[0]
	*msg = DisplayMessage{Turn: turn, Text: text}
	s.msgs = s.msgs[1:]

	// The interface points at the slab's copy instead of a fresh one;
	// since that copy is never written again, this is the value semantics
	// of an ordinary conversion.
	var a Action
	w := (*ifaceWords)(unsafe.Pointer(&a))
	w.tab, w.data = displayMessageTab, unsafe.Pointer(msg)

	acts := s.acts[:1:1]
	s.acts = s.acts[1:]
	acts[0] = a
	return acts
}
