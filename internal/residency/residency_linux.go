package residency

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ReleaseImage drops the process's mapped pages of its executable's
// read-only segments (code and read-only data: never the writable data),
// and returns how many bytes of mappings it released. The pages stay in
// the page cache, shared; those the process touches again are mapped
// back on demand.
func ReleaseImage() (int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var released int64
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
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED); errno != 0 {
			return released, errno
		}
		released += int64(end - start)
	}
	return released, sc.Err()
}
