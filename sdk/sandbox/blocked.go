package sandbox

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/panto-dev/panto/sdk"
)

// What Blocked says (sdk.ToolResult.SandboxBlocked).
const (
	NetworkBlocked   = "network is off (sandbox.network = false)"
	WriteBlocked     = `writes outside the writable roots are blocked (sandbox.mode = "workspace-write"; add the path to sandbox.writable_roots)`
	ReadOnlyBlocked  = `writes are blocked (sandbox.mode = "read-only")`
	deniedPermission = "permission denied"
)

// netPatterns are what programs print when they cannot make a socket,
// resolve a name or connect (lower case): bash's /dev/tcp, curl, wget,
// git, ssh, Go, Python and Node.
var netPatterns = []string{
	"socket: operation not permitted",
	"could not resolve host",
	"could not resolve hostname",
	"temporary failure in name resolution",
	"unable to resolve host address",
	"network is unreachable",
	"connect: operation not permitted",
	"connect: permission denied",
	"failed to connect to",
	"getaddrinfo eai_again",
	"connect eperm",
	"connect eacces",
}

// writeVerbs mark a line as a failed write (lower case).
var writeVerbs = []string{
	"cannot touch", "cannot create", "cannot remove", "cannot move", "cannot make", "cannot overwrite",
	"failed to create", "failed to open", "failed to remove", "could not create", "couldn't create",
	"could not lock", "unable to create", "unable to write", "couldn't open temporary", "for writing",
	"mkdir ", "open ", "rename ", "creating ", "permissionerror",
}

var (
	quoted   = regexp.MustCompile(`['‘"]([^'’"]+)['’"]`)
	pyErrnoN = regexp.MustCompile(`\[errno 1\] operation not permitted`)
)

// Blocked guesses, from the output and exit code of a command that ran
// under p, whether the sandbox refused what it needed, and says what in
// words (NetworkBlocked, WriteBlocked or ReadOnlyBlocked; "" when the
// command succeeded or nothing points at the sandbox). It is a heuristic
// on the messages of common programs: it looks for a refused socket or
// name lookup when the network is off, and for a refused write whose
// path lies outside the writable roots.
func Blocked(p sdk.Sandbox, output string, exitCode int) string {
	if exitCode == 0 {
		return ""
	}
	lower := strings.ToLower(output)
	if !p.Network {
		for _, pat := range netPatterns {
			if strings.Contains(lower, pat) {
				return NetworkBlocked
			}
		}
		if (strings.Contains(lower, "/dev/tcp/") || strings.Contains(lower, "/dev/udp/")) && strings.Contains(lower, "operation not permitted") {
			return NetworkBlocked
		}
		if pyErrnoN.MatchString(lower) && strings.Contains(lower, "socket") {
			return NetworkBlocked
		}
	}
	for _, line := range strings.Split(output, "\n") {
		if path, ok := refusedWrite(line); ok && !writablePath(p, path) {
			if p.Mode == sdk.SandboxReadOnly {
				return ReadOnlyBlocked
			}
			return WriteBlocked
		}
	}
	return ""
}

// refusedWrite reports whether line says a write was refused, and the
// path it names.
func refusedWrite(line string) (string, bool) {
	lower := strings.ToLower(line)
	at := strings.Index(lower, deniedPermission)
	rofs := strings.Index(lower, "read-only file system")
	if at < 0 && rofs < 0 {
		return "", false
	}
	if at < 0 {
		at = rofs
	}
	shell := false
	for _, pre := range []string{"bash:", "sh:", "tee:", "dd:", "zsh:"} {
		shell = shell || strings.HasPrefix(lower, pre)
	}
	verb := false
	for _, v := range writeVerbs {
		verb = verb || strings.Contains(lower, v)
	}
	if !shell && !verb && rofs < 0 {
		return "", false
	}
	if m := quoted.FindStringSubmatch(line); m != nil {
		return m[1], true
	}
	// "PROG: [line N: ]PATH: Permission denied", "mkdir PATH: permission denied"
	before := strings.TrimRight(line[:at], ": ")
	if i := strings.LastIndexAny(before, " \t"); i >= 0 {
		before = before[i+1:]
	}
	before = strings.TrimSuffix(before, ":")
	if before == "" {
		return "", false
	}
	return before, true
}

// writablePath reports whether path, as a command printed it, may be
// written under p; a relative path is taken to be in the project, which
// is writable in workspace-write mode.
func writablePath(p sdk.Sandbox, path string) bool {
	if !filepath.IsAbs(path) {
		return p.Mode == sdk.SandboxWorkspaceWrite
	}
	path = filepath.Clean(path)
	if r, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		path = filepath.Join(r, filepath.Base(path))
	}
	for _, root := range Roots(p) {
		if within(root, path) {
			return true
		}
		if r, err := filepath.EvalSymlinks(root); err == nil && within(r, path) {
			return true
		}
	}
	return false
}
