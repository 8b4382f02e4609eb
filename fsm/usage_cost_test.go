package fsm

import "testing"

// TestUsageCostSums: a reported cost is summed over requests; a sum has
// one when any part had it, and none when no part did.
func TestUsageCostSums(t *testing.T) {
	a, b := 0.0021925, 0.00168
	sum := Usage{Cost: &a}.add(Usage{}).add(Usage{Cost: &b})
	if sum.Cost == nil || *sum.Cost != a+b {
		t.Errorf("cost %v; want %v", sum.Cost, a+b)
	}
	if (Usage{}).add(Usage{}).Cost != nil {
		t.Error("a sum of unreported costs reports one")
	}
	if got := describeUsage(sum); got != "0/0/0 cost=0.0038725" {
		t.Errorf("describe %q", got)
	}
}
