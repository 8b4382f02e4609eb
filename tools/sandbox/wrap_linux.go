package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// probeArg starts this program in the namespaces a sandboxed command gets,
// only to see that they can be made.
const probeArg = "__loom-lsp-sandbox-probe"

// probe finds what this machine offers, once per process.
var probe = sync.OnceValue(func() system {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return system{why: "Landlock is not available on this kernel (it needs Linux 5.13 or later with Landlock enabled)"}
	}
	sys := system{abi: abi}
	exe, err := os.Executable()
	if err != nil {
		sys.why = "cannot find loom-lsp's own executable: " + err.Error()
		return system{why: sys.why}
	}
	cmd := exec.Command(exe, probeArg)
	cmd.Env = []string{"TMPDIR=" + os.TempDir()}
	cmd.SysProcAttr = namespaces(&syscall.SysProcAttr{}, true)
	if out, err := cmd.CombinedOutput(); err != nil {
		sys.why = fmt.Sprintf("user namespaces are not available (%v %s)", err, strings.TrimSpace(string(out)))
	} else {
		sys.userns = true
	}
	return sys
})

// namespaces adds to attr a user and mount namespace (and a network one
// when netns), with the capabilities the helper needs in them to mount
// and to bring the loopback up; the helper drops them before the exec.
func namespaces(attr *syscall.SysProcAttr, netns bool) *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	if netns {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
	return attr
}

// Wrap rewrites cmd, made by exec.Command and not started, to run under
// the sandbox: through this program's helper, which sets the sandbox up
// and execs the command. cmd keeps its process group, directory,
// environment and files. It does nothing where there is no sandbox
// (Active is false) or when s is nil.
func (s *Sandbox) Wrap(cmd *exec.Cmd) error {
	if !s.Active() || cmd.Err != nil {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	pl := s.plan()
	data, err := json.Marshal(pl)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	cmd.Args = append([]string{exe, HelperArg, cmd.Path}, cmd.Args...)
	cmd.Path = exe
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(s.commandEnv(slices.Clone(env)), planVar+"="+string(data))
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		copied := *cmd.SysProcAttr
		attr = &copied
	}
	if pl.Mounts {
		attr = namespaces(attr, pl.NetNS)
	}
	cmd.SysProcAttr = attr
	return nil
}
