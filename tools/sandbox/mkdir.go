package sandbox

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"
)

// mkdirBeneath makes the directory rel (slash-separated) and its missing
// parents inside root, one component at a time through directory file
// descriptors opened without following symbolic links, so that a link a
// command put in its path never leads the directory outside root.
func mkdirBeneath(root, rel string) error {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer func() { unix.Close(fd) }()
	for _, name := range strings.Split(rel, "/") {
		if name == "" || name == "." || name == ".." {
			return errors.New("not a path inside the folder: " + rel)
		}
		if err := unix.Mkdirat(fd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return err
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		unix.Close(fd)
		fd = next
	}
	return nil
}
