package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/panto-dev/panto/sdk"
)

// applyEnv makes the test binary a helper: it applies the sandbox in the
// variable (JSON) and then execs bash -c with its last argument.
const applyEnv = "PANTO_SANDBOX_TEST_APPLY"

func TestMain(m *testing.M) {
	if v := os.Getenv(applyEnv); v != "" {
		os.Exit(runApplied(v))
	}
	os.Exit(m.Run())
}

func runApplied(v string) int {
	var p sdk.Sandbox
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 111
	}
	os.Unsetenv(applyEnv)
	if err := Apply(p); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 112
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 113
	}
	err = syscall.Exec(bash, []string{"bash", "-c", os.Args[len(os.Args)-1]}, append(os.Environ(), Environ(p)...))
	fmt.Fprintln(os.Stderr, "helper: exec:", err)
	return 114
}

// sandboxed runs command with bash under p, in dir; it returns the
// combined output and the exit code.
func sandboxed(t testing.TB, p sdk.Sandbox, dir, command string) (string, int) {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), applyEnv+"="+string(b))
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}
