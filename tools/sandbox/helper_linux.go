package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// init runs the helper when this program was started as one, before
// main and before any test's TestMain: every binary that can start a
// sandboxed command (it links this package) can be its own helper.
func init() {
	if len(os.Args) == 2 && os.Args[1] == probeArg {
		// Started in the namespaces: see that what the helper does there
		// works too (some containers allow the namespaces, not the mounts).
		runtime.LockOSThread()
		dir := os.TempDir()
		if err := mountReadOnly([]string{dir}, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		// And the tmpfs that hides the runtime directory.
		if err := hideSockets(plan{RuntimeDirs: []string{dir}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := loopbackUp(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) < 3 || os.Args[1] != HelperArg {
		return
	}
	// Capabilities and securebits are per thread: set them on the thread
	// that execs.
	runtime.LockOSThread()
	err := runHelper(os.Args[2], os.Args[3:])
	fmt.Fprintf(os.Stderr, "loom-lsp: the sandbox could not be set up, the command did not run: %v\n", err)
	os.Exit(126)
}

// runHelper sets the sandbox up and execs path with argv; it returns
// only on failure.
func runHelper(path string, argv []string) error {
	var pl plan
	if err := json.Unmarshal([]byte(os.Getenv(planVar)), &pl); err != nil {
		return fmt.Errorf("bad plan: %w", err)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, planVar+"=") {
			env = append(env, kv)
		}
	}
	if pl.Mounts {
		if err := mountReadOnly(pl.ReadOnly, pl.Pin); err != nil {
			return err
		}
		// The working directory still refers to what lay under a mount
		// just made over it (the folder itself, made read-only): enter
		// it again by its name, through the mount.
		if wd, err := os.Getwd(); err == nil {
			if err := os.Chdir(wd); err != nil {
				return fmt.Errorf("enter %s again: %w", wd, err)
			}
		}
		if err := hideSockets(pl); err != nil {
			return err
		}
	}
	if pl.NetNS {
		if err := loopbackUp(); err != nil {
			return err
		}
	}
	// The grants list directories' entries (around hidden paths), and an
	// entry of a busy directory such as /tmp may vanish, or change from
	// file to directory, between the listing and the rule: build the
	// rules again. Nothing is restricted until all of them were added.
	var err error
	for range 3 {
		if err = restrict(pl); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if pl.Mounts {
		if err := dropCapabilities(); err != nil {
			return err
		}
	}
	return syscall.Exec(path, argv, env)
}

// mountReadOnly bind-mounts each existing path over itself, read-only,
// in this process's private mount namespace, after binding each of pins
// onto itself (writable: a mount point cannot be renamed or removed). A
// .git file (a worktree's, a submodule's) protects the git directory it
// names too.
func mountReadOnly(paths, pins []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	for _, p := range pins {
		if st, err := os.Lstat(p); err != nil || !st.IsDir() {
			continue // gone, or a link: nothing to pin
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", p, err)
		}
	}
	for i := 0; i < len(paths); i++ {
		p := paths[i]
		st, err := os.Stat(p)
		if err != nil {
			continue // absent: nothing to protect
		}
		if filepath.Base(p) == ".git" && st.Mode().IsRegular() {
			paths = append(paths, gitDirs(p)...)
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", p, err)
		}
		var fs unix.Statfs_t
		if err := unix.Statfs(p, &fs); err != nil {
			return fmt.Errorf("statfs %s: %w", p, err)
		}
		// A remount in a user namespace must keep the flags that lock the
		// mount it copies.
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		for st, ms := range map[int64]uintptr{unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV,
			unix.ST_NOEXEC: unix.MS_NOEXEC, unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME,
			unix.ST_RELATIME: unix.MS_RELATIME} {
			if fs.Flags&st != 0 {
				flags |= ms
			}
		}
		if err := unix.Mount("", p, "", flags, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	return nil
}

// gitDirs returns the git directory a .git file names ("gitdir: X") and
// its common directory, when they exist.
func gitDirs(dotGit string) []string {
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return nil
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return nil
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(dotGit), dir)
	}
	out := []string{dir}
	if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		out = append(out, filepath.Clean(common))
	}
	return out
}

// loopbackUp brings up lo in this process's new network namespace, so
// that a command can still talk to itself.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// dropCapabilities gives up the capabilities the helper had in its user
// namespace, so that the command cannot undo the mounts: no ambient set,
// none regained by exec as root, none left on this thread.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	const bits = 1<<0 | 1<<1 | 1<<6 | 1<<7 // NOROOT, its lock, NO_CAP_AMBIENT_RAISE, its lock
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, bits, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// configs are go-landlock's configurations by ABI version.
var configs = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7}

// restrict applies the plan's Landlock ruleset to this process.
func restrict(pl plan) error {
	abi := min(pl.ABI, len(configs))
	if abi < 1 {
		return errors.New("no Landlock on this kernel")
	}
	base := configs[abi-1]
	args := []any{base.HandledAccessFS}
	var net []landlock.Rule
	if abi >= 4 {
		switch {
		case pl.Network == NetworkOff && !pl.NetNS:
			args = append(args, landlock.AccessNetSet(ll.AccessNetConnectTCP|ll.AccessNetBindTCP))
		case pl.Network == NetworkAllow:
			args = append(args, landlock.AccessNetSet(ll.AccessNetConnectTCP))
			for _, p := range pl.Ports {
				net = append(net, landlock.ConnectTCP(p))
			}
		}
	}
	if abi >= 6 {
		// Abstract unix sockets (X11's, an older D-Bus's) are scoped with
		// the network on too: see sockets.go.
		args = append(args, landlock.ScopedSet(ll.ScopeSignal|ll.ScopeAbstractUnixSocket))
	}
	cfg, err := landlock.NewConfig(args...)
	if err != nil {
		return err
	}
	rules := append(fsRules(pl, abi), net...)
	return cfg.Restrict(rules...)
}

// fsRules grants reads of everything but the hidden paths, and writes of
// the workspace and the writable directories.
func fsRules(pl plan, abi int) []landlock.Rule {
	var rules []landlock.Rule
	for _, g := range split("/", pl.Hide) {
		switch {
		case !g.whole:
			rules = append(rules, landlock.PathAccess(ll.AccessFSReadDir, g.path).IgnoreIfMissing())
		case isDir(g.path):
			rules = append(rules, landlock.RODirs(g.path).IgnoreIfMissing())
		default:
			rules = append(rules, landlock.ROFiles(g.path).IgnoreIfMissing())
		}
	}
	exclude := pl.Hide
	if !pl.Mounts {
		// No mount namespace: keep the read-only paths out of the grants.
		exclude = append(append([]string{}, exclude...), pl.ReadOnly...)
	}
	writable := append([]string{pl.Root}, pl.Write...)
	if pl.ReadOnlyRoot {
		// The folder is granted no write. Inside a writable temp dir, it
		// is a read-only mount (Mounts), or left out of the temp dir's
		// grant (ReadOnly holds it: then nothing new can be created at
		// the temp dir's top level).
		writable = pl.Write
	}
	for _, w := range writable {
		for _, g := range split(w, exclude) {
			if !g.whole {
				continue
			}
			if isDir(g.path) {
				r := landlock.RWDirs(g.path).IgnoreIfMissing()
				if abi >= 2 {
					r = r.WithRefer()
				}
				rules = append(rules, r)
			} else if exists(g.path) {
				rules = append(rules, landlock.RWFiles(g.path).IgnoreIfMissing())
			}
		}
	}
	devices := landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom").IgnoreIfMissing()
	ptys := landlock.RWDirs("/dev/pts", "/dev/shm").IgnoreIfMissing()
	if abi >= 5 {
		devices, ptys = devices.WithIoctlDev(), ptys.WithIoctlDev()
	}
	rules = append(rules, socketRules(pl, abi)...)
	return append(rules, devices, ptys)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
