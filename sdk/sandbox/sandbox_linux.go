package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/panto-dev/panto/sdk"
)

var probeOnce = sync.OnceValue(func() Support {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		abi = 0
	}
	s := Support{LandlockABI: abi, Seccomp: seccomp.Supported()}
	switch {
	case abi == 0:
		s.Reason = "the sandbox needs Landlock (Linux 6.7 or later, with landlock in the kernel's lsm= list); this kernel has none enabled"
	case abi < minLandlockABI:
		s.Reason = fmt.Sprintf("the sandbox needs Landlock ABI %d or later (Linux 6.7 or later) for its network rules; this kernel has ABI %d",
			minLandlockABI, abi)
	case !s.Seccomp:
		s.Reason = "the sandbox needs seccomp filters (CONFIG_SECCOMP_FILTER); this kernel has none"
	default:
		// Every filter Apply may load must build for this architecture.
		for _, p := range []sdk.Sandbox{{}, {UnixSockets: []string{"/s"}}} {
			pol := seccompPolicy(p)
			if _, err := pol.Assemble(); err != nil {
				s.Reason = fmt.Sprintf("the sandbox's seccomp filter cannot be built for %s: %v", runtime.GOARCH, err)
			}
		}
	}
	return s
})

// devFiles are the device files every process may read, write and use
// ioctl on (terminals included): missing ones are skipped.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// Apply confines the calling process, and so everything it starts from
// now on, to p; it cannot be undone. It is meant for a helper process
// just before it starts the command (every thread is confined, and the
// process gets no_new_privs, so setuid programs lose their power).
//
// Landlock: everything may be read and executed; only p.TmpDir and, in
// workspace-write mode, p.WritableRoots may be written, with files
// moved and linked within and between them; the device files in devFiles
// may be written and used as terminals. Signals are not scoped (see
// restrictLandlock). With the network off, TCP bind and connect are refused,
// abstract unix sockets outside the sandbox cannot be reached, and
// seccomp refuses (EPERM) socket(2) for every family but AF_UNIX — and
// for AF_UNIX too when p.UnixSockets is empty; socketpair(2) stays, so
// processes still talk over pipes. When p.UnixSockets is not empty,
// AF_UNIX sockets can be made, and before Landlock ABI 9 (which limits
// connect to the folders of p.UnixSockets) nothing limits which
// pathname socket they connect to. io_uring is refused always: its
// operations bypass seccomp.
//
// Known gaps: on amd64 a 32-bit (i386) program's system calls are not
// seen by the seccomp filter (Landlock still refuses TCP, not UDP on a
// kernel before Landlock ABI 10); reads are not restricted.
func Apply(p sdk.Sandbox) error {
	if s := probeOnce(); !s.OK() {
		return errors.New("sandbox: " + s.Reason)
	}
	if err := restrictLandlock(p); err != nil {
		return fmt.Errorf("sandbox: landlock: %w", err)
	}
	if err := restrictSeccomp(p); err != nil {
		return fmt.Errorf("sandbox: seccomp: %w", err)
	}
	return nil
}

func restrictLandlock(p sdk.Sandbox) error {
	cfg := landlock.V11 // the newest go-landlock knows; BestEffort degrades to the kernel's
	// No signal scoping: Go restricts each thread of the calling process
	// with a landlock_restrict_self of its own, so its threads are in
	// sibling domains, and a signal sent from one thread to what another
	// started (the reaper killing bash's process group when the tools
	// process dies) would be refused. Signals stay bounded by the user's
	// own processes, as without the sandbox.
	cfg.Scoped &^= ll.ScopeSignal
	if p.Network {
		cfg.HandledAccessNet = 0
		cfg.HandledAccessFS &^= ll.AccessFSResolveUnix
		cfg.Scoped &^= ll.ScopeAbstractUnixSocket
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(devFiles...).WithIoctlDev().IgnoreIfMissing(),
	}
	if roots := Roots(p); len(roots) > 0 {
		rules = append(rules, landlock.RWDirs(roots...).WithRefer().IgnoreIfMissing())
	}
	if !p.Network && len(p.UnixSockets) > 0 {
		// A rule on the socket's folder: a rule on the socket itself is
		// not certain to be accepted by every kernel with ABI 9.
		var dirs []string
		for _, s := range p.UnixSockets {
			dirs = append(dirs, filepath.Dir(s))
		}
		rules = append(rules, landlock.PathAccess(ll.AccessFSResolveUnix, dirs...).IgnoreIfMissing())
	}
	return cfg.BestEffort().Restrict(rules...)
}

func restrictSeccomp(p sdk.Sandbox) error {
	return seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Flag: seccomp.FilterFlagTSync, Policy: seccompPolicy(p)})
}

// seccompPolicy refuses (EPERM) the system calls p does not allow.
func seccompPolicy(p sdk.Sandbox) seccomp.Policy {
	deny := seccomp.SyscallGroup{
		Action: seccomp.ActionErrno, // EPERM
		Names:  []string{"io_uring_setup", "io_uring_enter", "io_uring_register"},
	}
	if !p.Network {
		if runtime.GOARCH == "386" {
			deny.Names = append(deny.Names, "socketcall") // socket(2) through the multiplexer
		}
		if len(p.UnixSockets) == 0 {
			deny.Names = append(deny.Names, "socket")
		} else {
			deny.NamesWithCondtions = []seccomp.NameWithConditions{{
				Name:       "socket",
				Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_UNIX}},
			}}
		}
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{deny}}
}
