package plugins_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// bin holds the real panto and the example extensions, built once by
// TestMain.
var bin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "panto-plugins-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"./cmd/panto", "./examples/plugins/sysprompt", "./examples/plugins/hello", "./examples/plugins/persona")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build panto and the example extensions:", err)
		return 1
	}
	bin = dir
	return m.Run()
}

// repoRoot walks up from the working directory to the folder of go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// ext is the path of a built example extension.
func ext(name string) string { return filepath.Join(bin, name) }

// machine is one user's machine: HOME, the XDG folders and PANTO_HOME in
// the test's own folder, a project to run panto in, and one session log.
type machine struct {
	t       *testing.T
	home    string
	project string
	session string
	env     []string
}

func newMachine(t *testing.T) *machine {
	t.Helper()
	root := t.TempDir()
	m := &machine{
		t:       t,
		home:    filepath.Join(root, "home"),
		project: filepath.Join(root, "project"),
		session: filepath.Join(root, "session.jsonl"),
	}
	require.NoError(t, os.MkdirAll(m.project, 0o755))
	m.env = []string{
		"HOME=" + m.home,
		"XDG_DATA_HOME=" + filepath.Join(m.home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(m.home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(m.home, "state"),
		"PANTO_HOME=" + filepath.Join(m.home, "panto"),
		"PATH=" + os.Getenv("PATH"),
		"PANTO_LOG_LEVEL=debug",
	}
	// A known seed, so the prompt is the test's and not panto's default.
	m.write(filepath.Join(".panto", "SYSTEM.md"), "You are a test agent.\n")
	return m
}

// write writes a file of the project.
func (m *machine) write(rel, text string) {
	m.t.Helper()
	path := filepath.Join(m.project, rel)
	require.NoError(m.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(m.t, os.WriteFile(path, []byte(text), 0o644))
}

// panto runs the real binary in the project, offline, and requires exit
// status 0. It returns stdout.
func (m *machine) panto(args ...string) string {
	m.t.Helper()
	cmd := exec.Command(filepath.Join(bin, "panto"), args...)
	cmd.Dir = m.project
	cmd.Env = m.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(m.t, err, "panto %q\nstdout: %s\nstderr: %s", args, out.String(), errb.String())
	return out.String()
}

// turn runs one print-mode turn or command in the machine's session with
// the echo provider and the given extensions.
func (m *machine) turn(text string, exts ...string) string {
	m.t.Helper()
	args := []string{"-p", text, "--provider", "echo", "--session", m.session}
	for _, x := range exts {
		args = append(args, "--extension", ext(x))
	}
	return m.panto(args...)
}

// entry is one line of a session log, the fields these tests look at.
type entry struct {
	Type       string          `json:"type"`
	Message    json.RawMessage `json:"message"`
	Event      string          `json:"event"`
	Reseeded   bool            `json:"reseeded"`
	Extensions []string        `json:"extensions"`
	Extension  string          `json:"extension"`
	Data       json.RawMessage `json:"data"`
}

// logEntries returns the entries of the session log (the header left out).
func (m *machine) logEntries() []entry {
	m.t.Helper()
	data, err := os.ReadFile(m.session)
	require.NoError(m.t, err)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	require.Contains(m.t, lines[0], `"type":"session"`)
	var out []entry
	for _, line := range lines[1:] {
		var e entry
		require.NoError(m.t, json.Unmarshal([]byte(line), &e), "line %q", line)
		out = append(out, e)
	}
	return out
}

// systemMessageJSON is a system message exactly as the log records it.
// systemMessageJSON is a system message as the log writes it; source is
// who wrote it ("extension hello", "project /p/.panto/SYSTEM.md").
func systemMessageJSON(mode, text, source string) string {
	q, _ := json.Marshal(text)
	src, _ := json.Marshal(source)
	return `{"role":"system","mode":"` + mode + `","source":` + string(src) + `,"content":[{"type":"text","text":` + string(q) + `}]}`
}

// kinds summarises the log: "system append TEXT", "system replace TEXT",
// "lifecycle started [exts]", "lifecycle resumed reseeded=BOOL",
// "user", "assistant", "data EXT JSON".
func (m *machine) kinds() []string {
	m.t.Helper()
	var out []string
	for _, e := range m.logEntries() {
		switch e.Type {
		case "message":
			var msg struct {
				Role    string `json:"role"`
				Mode    string `json:"mode"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			require.NoError(m.t, json.Unmarshal(e.Message, &msg))
			if msg.Role == "system" {
				require.Len(m.t, msg.Content, 1)
				out = append(out, "system "+msg.Mode+" "+msg.Content[0].Text)
			} else {
				out = append(out, msg.Role)
			}
		case "lifecycle":
			if e.Event == "started" {
				out = append(out, fmt.Sprintf("lifecycle started %v", e.Extensions))
			} else {
				out = append(out, fmt.Sprintf("lifecycle %s reseeded=%t", e.Event, e.Reseeded))
			}
		case "extension_data":
			out = append(out, "data "+e.Extension+" "+string(e.Data))
		default:
			out = append(out, e.Type)
		}
	}
	return out
}

// promptAt is `panto prompt --session F [--at N] --json`: the text of each
// block (at < 0: the whole log).
func (m *machine) promptAt(at int) []string {
	m.t.Helper()
	args := []string{"prompt", "--session", m.session, "--json"}
	if at >= 0 {
		args = append(args, "--at", fmt.Sprint(at))
	}
	var got struct {
		Blocks []struct {
			Text string `json:"text"`
		} `json:"blocks"`
	}
	require.NoError(m.t, json.Unmarshal([]byte(m.panto(args...)), &got))
	out := []string{}
	for _, b := range got.Blocks {
		out = append(out, b.Text)
	}
	return out
}

// echoPrompt is what the echo provider reports of the prompt it was sent.
func echoPrompt(blocks ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "system prompt: %d block(s)\n", len(blocks))
	for i, s := range blocks {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, s)
	}
	return b.String()
}
