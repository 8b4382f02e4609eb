package fsm

// displaySlabSize is how many text-path steps share one allocation.
const displaySlabSize = 64

// displaySlab hands out the result of an LlmTextDelta step — a
// one-element []Action holding a *DisplayMessage — without allocating per
// step: the DisplayMessage values and the one-element slices are cut from
// arrays allocated displaySlabSize at a time, and a pointer goes into an
// interface without being copied to the heap, so streaming costs no
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

// display returns []Action{&DisplayMessage{Turn: turn, Text: text}}, with
// capacity 1 (an append by the caller copies).
func (s *displaySlab) display(turn uint64, text string) []Action {
	if len(s.msgs) == 0 {
		s.msgs = make([]DisplayMessage, displaySlabSize)
		s.acts = make([]Action, displaySlabSize)
	}
	msg := &s.msgs[0]
	*msg = DisplayMessage{Turn: turn, Text: text}
	s.msgs = s.msgs[1:]
	acts := s.acts[:1:1]
	s.acts = s.acts[1:]
	acts[0] = msg
	return acts
}
