package residency

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func rssFile(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	t.Fatal("no RssFile")
	return 0
}

// ReleaseImage unmaps the executable's read-only segments (the test
// binary's here): the file pages the process holds fall, and the process
// runs on, mapping back what it runs.
func TestReleaseImage(t *testing.T) {
	before := rssFile(t)
	released, err := ReleaseImage()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFile(t)
	t.Logf("released %d MiB of mappings; file pages held %d -> %d KiB", released>>20, before>>10, after>>10)
	if released == 0 || after >= before {
		t.Errorf("released %d bytes of mappings, file pages %d -> %d", released, before, after)
	}
}
