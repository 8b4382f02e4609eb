package residency

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// ReleaseImage drops the process's mapped pages of its executable's
// read-only segments (code and read-only data: never the writable data),
// and returns how many bytes of mappings it released. The pages stay in
// the page cache, shared; those the process touches again are mapped
// back on demand.
//
// Whatever runs after the release maps its pages back, a whole large
// folio (up to 2 MiB) for each page touched in a freshly linked binary.
// So the work that would touch much of the read-only data soon after —
// a garbage collection, which reads the stack maps of every goroutine's
// every frame — is done first (returning the freed heap to the system
// too), the mappings are read before, and the release itself is a tight
// loop of system calls.
func ReleaseImage() (int64, error) {
	ranges, err := imageRanges()
	if err != nil {
		return 0, err
	}
	debug.FreeOSMemory()
	var released int64
	for _, r := range ranges {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, r[0], r[1]-r[0], syscall.MADV_DONTNEED); errno != 0 {
			return released, errno
		}
		released += int64(r[1] - r[0])
	}
	return released, nil
}

// imageRanges lists the executable's read-only mappings, [start, end).
func imageRanges() ([][2]uintptr, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ranges [][2]uintptr
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 00400000-00402000 r--p 00000000 fd:00 1234  /path/to/exe
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		ranges = append(ranges, [2]uintptr{uintptr(start), uintptr(end)})
	}
	return ranges, sc.Err()
}
