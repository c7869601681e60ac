package main

import (
	"os/exec"
	"slices"
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

// cmd/panto's own layers, front end → app → what the app resolves with →
// host: package main chooses a front end; the front ends (the line loop
// with print and json modes, the full-screen UI, the ACP agent) are thin clients of the
// app layer and know nothing of each other; the app knows no front end;
// what the app builds on (config, layers, trust, the prompt files, the
// keys) is the app's alone, and knows nothing above it.
func TestCmdLayersGoDownwards(t *testing.T) {
	t.Parallel()
	const mod = "github.com/panto-dev/panto/cmd/panto"
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", out)
	frontEnds := []string{"internal/lineloop", "internal/tui", "internal/acp"}
	appOnly := []string{"internal/config", "internal/layers", "internal/trust", "internal/sysprompt", "internal/keys", "internal/mcpconfig"}
	layer := func(pkg string) string {
		switch {
		case pkg == "":
			return "main"
		case under(pkg, "internal/app"):
			return "app"
		}
		for _, f := range frontEnds {
			if under(pkg, f) {
				return f
			}
		}
		return "below"
	}
	var broken []string
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, ok := strings.CutPrefix(f[0], mod)
		if !ok {
			continue
		}
		pkg = strings.TrimPrefix(pkg, "/")
		from := layer(pkg)
		seen[from] = true
		for _, imp := range f[1:] {
			imp, ok := strings.CutPrefix(imp, mod)
			if !ok {
				continue
			}
			imp = strings.TrimPrefix(imp, "/")
			to := layer(imp)
			switch {
			case to == "main":
				broken = append(broken, pkg+" imports package main")
			case from == "app" && to != "below":
				broken = append(broken, pkg+" imports "+imp+": the app knows no front end")
			case from == "below" && to != "below":
				broken = append(broken, pkg+" imports "+imp+": what the app builds on knows nothing above it")
			case strings.HasPrefix(from, "internal/") && to != from && to != "app" && to != "below":
				broken = append(broken, pkg+" imports "+imp+": a front end knows no other")
			case strings.HasPrefix(from, "internal/") && slices.ContainsFunc(appOnly, func(p string) bool { return under(imp, p) }):
				broken = append(broken, pkg+" imports "+imp+": a front end gets it from the app")
			}
		}
	}
	for _, l := range []string{"main", "app", "below", "internal/lineloop", "internal/tui", "internal/acp"} {
		require.True(t, seen[l], "go list listed a package of the layer %s", l)
	}
	require.Empty(t, broken)
}
