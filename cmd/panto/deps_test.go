package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The layers' rule, as far as imports can hold it: front end (cmd/...)
// → host → the log and the wire (STYLE.md, "Dependency direction"). A
// front end reaches the model, the extensions and the session only
// through host's API:
//
//   - no package under cmd/ imports serializers/... (the wire formats):
//     host has its own types for the model settings, stop reasons and
//     usage, and host/provider says the limits a config checks;
//   - none imports internal/pb or internal/protocol (the extensions'
//     transport, behind host/extension) or sdk/... (an extension
//     author's);
//   - nothing below host (conversation, sessionlog, serializers, rules,
//     sdk, internal/...) imports host or cmd.
//
// Only what a package imports to build counts: a test may fake a
// provider with the wire's types.
func TestImportsGoDownwards(t *testing.T) {
	t.Parallel()
	const mod = "github.com/panto-dev/panto/"
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", out)
	var broken []string
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, imports := strings.TrimPrefix(f[0], mod), f[1:]
		seen++
		for _, imp := range imports {
			imp, ok := strings.CutPrefix(imp, mod)
			if !ok {
				continue
			}
			switch {
			case under(pkg, "cmd") && (under(imp, "serializers") || under(imp, "internal/pb") || under(imp, "internal/protocol") || under(imp, "sdk")):
				broken = append(broken, pkg+" imports "+imp+": a front end reaches it only through host")
			case !under(pkg, "cmd") && !under(pkg, "host") && !under(pkg, "examples") && !under(pkg, "extensions") &&
				(under(imp, "host") || under(imp, "cmd")):
				broken = append(broken, pkg+" imports "+imp+": nothing below host imports host or a front end")
			}
		}
	}
	require.Greater(t, seen, 20, "go list listed the module's packages")
	require.Empty(t, broken)
}

// under reports whether pkg is dir or a package below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }
