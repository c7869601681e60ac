package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/panto-dev/panto/sdk"
)

// UnsupportedEnv, set to a reason, makes Probe report that this machine
// cannot sandbox, with that reason: tests use it to take the paths of a
// kernel without Landlock on one that has it.
const UnsupportedEnv = "PANTO_SANDBOX_UNSUPPORTED"

// Support is what Probe found this machine can do.
type Support struct {
	// LandlockABI is the kernel's Landlock ABI version, 0 without
	// Landlock.
	LandlockABI int
	// Seccomp: the kernel filters system calls with seccomp.
	Seccomp bool
	// Reason says, when the sandbox cannot be applied here, why not.
	Reason string
}

// OK reports whether Apply can confine a process here.
func (s Support) OK() bool { return s.Reason == "" }

// minLandlockABI is the first Landlock ABI with network rules (TCP bind
// and connect), Linux 6.7.
const minLandlockABI = 4

// Probe reports whether this machine can sandbox. The kernel is asked
// once per process; UnsupportedEnv is read on every call.
func Probe() Support {
	s := probeOnce()
	if r := os.Getenv(UnsupportedEnv); r != "" {
		s.Reason = r
	}
	return s
}

// Environ is the environment a sandboxed child gets on top of its own:
// the call's temporary directory as TMPDIR (and TMP and TEMP, which some
// programs read instead).
func Environ(p sdk.Sandbox) []string {
	if p.TmpDir == "" {
		return nil
	}
	return []string{"TMPDIR=" + p.TmpDir, "TMP=" + p.TmpDir, "TEMP=" + p.TmpDir}
}

// Writable reports whether path (absolute, clean, symlinks resolved)
// may be written under p: it lies in p.TmpDir or, in workspace-write
// mode, in one of p.WritableRoots.
func Writable(p sdk.Sandbox, path string) bool {
	for _, r := range Roots(p) {
		if within(r, path) {
			return true
		}
	}
	return false
}

// Roots are the folders p lets a process write in: p.TmpDir and, in
// workspace-write mode, p.WritableRoots.
func Roots(p sdk.Sandbox) []string {
	var roots []string
	if p.Mode == sdk.SandboxWorkspaceWrite {
		roots = append(roots, p.WritableRoots...)
	}
	if p.TmpDir != "" {
		roots = append(roots, p.TmpDir)
	}
	return roots
}

func within(dir, path string) bool {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		dir, path = strings.ToLower(dir), strings.ToLower(path)
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
