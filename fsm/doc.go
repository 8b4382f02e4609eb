// Package fsm is loom-lsp's agent state machine: pure, synchronous and
// deterministic. Events go in through [Machine.Step]; actions come out, and
// the caller performs every action's I/O and feeds the outcome back as
// further events.
//
// The package never reads a clock, starts a goroutine or touches the
// operating system. Time is an input (a retry delay is a computed value in
// [ScheduleRetry]; [RetryTimeoutFired] tells the machine the timer fired),
// so the same event log always yields the same actions, byte for byte in
// [Describe].
//
// A caller drives the machine like this:
//
//	m := fsm.New(cfg)
//	acts, err := m.Step(fsm.UserInput{Text: "fix the bug"})
//	// perform acts in order; stream the model; Step each event that comes back.
//
// Step returns an error only for an event that is invalid in the current
// state (see [ErrInvalidEvent]) or that belongs to a request, turn or tool
// call that is no longer current (see [ErrStaleEvent]). In both cases the
// machine is left exactly as it was.
package fsm
