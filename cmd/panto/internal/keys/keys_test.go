package keys

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEncodeDecode(t *testing.T) {
	t.Parallel()
	k := &Keys{m: map[string]string{"ANTHROPIC_API_KEY": "sk-ant=with=equals", "OPENAI_API_KEY": ""}}
	back, err := decode(encode(k))
	require.NoError(t, err)
	require.Equal(t, k.m, back.m)
	_, err = decode([]byte("PATH=/bin\x00"))
	require.ErrorContains(t, err, `unexpected record "PATH"`)
}

func TestWithoutKeys(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"PATH=/bin", "HOME=/h"},
		withoutKeys([]string{"PATH=/bin", "ANTHROPIC_API_KEY=x", "HOME=/h", fdEnv + "=3", "OPENAI_API_KEY="}))
}

// childEnv makes the test binary a panto of its own: it runs Protect as
// main would and reports what a process reading its /proc entries sees.
const childEnv = "PANTO_KEYS_TEST_CHILD"

type report struct {
	Environ  string `json:"environ"`
	Cmdline  string `json:"cmdline"`
	Key      string `json:"key"`
	Err      string `json:"err"`
	Dumpable bool   `json:"dumpable"`
	InGoEnv  bool   `json:"in_go_env"`
	Extended string `json:"extended"`
}

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		protected := Protect
		if os.Getenv(childEnv+"_REEXEC") == "1" {
			// As where the block cannot be written: re-execute.
			protected = protectForcingReexec
		}
		k, err := protected()
		var r report
		if err != nil {
			r.Err = err.Error()
		}
		r.Key, _ = k.Lookup("ANTHROPIC_API_KEY")
		env, _ := os.ReadFile("/proc/self/environ")
		r.Environ = string(env)
		cmd, _ := os.ReadFile("/proc/self/cmdline")
		r.Cmdline = string(cmd)
		st, _ := os.ReadFile("/proc/self/status")
		r.Dumpable = !strings.Contains(string(st), "\nUid:") || dumpable()
		_, r.InGoEnv = os.LookupEnv("ANTHROPIC_API_KEY")
		r.Extended = strings.Join(k.Environ(), "\n")
		json.NewEncoder(os.Stdout).Encode(r)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Protect re-executes with the keys out of the environment block: the
// kernel's copy (/proc/self/environ) holds none, the process is
// undumpable, and the keys are still there for panto itself.
func TestProtectMovesTheKeysOutOfTheEnvironmentBlock(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel()
	t.Run("scrubbed", func(t *testing.T) { t.Parallel(); testProtect(t, "0") })
	t.Run("re-executed", func(t *testing.T) { t.Parallel(); testProtect(t, "1") })
}

func testProtect(t *testing.T, reexec string) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", childEnv+"_REEXEC="+reexec, "ANTHROPIC_API_KEY=sk-ant-secret-4242", "OPENAI_API_KEY=sk-oai-secret-4343")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	require.NoError(t, cmd.Run())
	var r report
	require.NoError(t, json.Unmarshal(out.Bytes(), &r), out.String())
	require.Empty(t, r.Err)
	require.Equal(t, "sk-ant-secret-4242", r.Key, "panto still has the key")
	require.NotContains(t, r.Environ, "secret", "the environment block holds no key")
	require.Contains(t, r.Environ, childEnv+"=1", "the rest of the environment is kept")
	require.NotContains(t, r.Cmdline, "secret")
	require.False(t, r.InGoEnv, "children do not inherit it")
	require.False(t, r.Dumpable)
	require.Contains(t, r.Extended, "OPENAI_API_KEY=sk-oai-secret-4343", "Environ gives them back to the code that decides who gets them")
}

// Without a key there is nothing to move: no re-execution.
func TestProtectWithoutKeys(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !IsKey(name) {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, childEnv+"=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	var r report
	require.NoError(t, json.Unmarshal(out, &r))
	require.Empty(t, r.Err)
	require.Empty(t, r.Key)
	require.False(t, r.Dumpable)
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("ANTHROPIC_API_KEY=x\x00OPENAI_API_KEY=y\x00"))
	f.Add([]byte("=\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := decode(data)
		if err != nil {
			return
		}
		for name := range k.m {
			if !IsKey(name) {
				t.Fatalf("took %q", name)
			}
		}
	})
}
