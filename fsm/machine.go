package fsm

// Machine is the agent state machine. It is not safe for concurrent use:
// one goroutine owns it.
type Machine struct {
	cfg   Config
	state State
}

// New returns a machine in WaitingForUserInput.
func New(cfg Config) *Machine {
	return &Machine{cfg: cfg.withDefaults()}
}

// State returns a read-only view of the current state.
func (m *Machine) State() State { return m.state }

// Step applies ev and returns the actions the caller must perform, in order.
func (m *Machine) Step(ev Event) ([]Action, error) {
	return nil, nil
}
