package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// /model in the line loop lists the provider's models (GET /v1/models)
// beside config's, refuses a name in neither with a did-you-mean and
// records nothing of it, and takes a listed one, or any with --force.
func TestLineLoopModelChecksTheProvidersList(t *testing.T) {
	t.Parallel()
	fake := newFake(t, reply{body: `{"object":"list","data":[{"id":"gpt-a","object":"model"},{"id":"gpt-b","object":"model"}]}`})
	root := t.TempDir()
	vars := map[string]string{"HOME": root, "PANTO_LOG_LEVEL": "off", "OPENAI_API_KEY": "sk-test"}
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".config", "panto"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".config", "panto", "config.toml"),
		[]byte("provider = \"openai\"\nmodel = \"gpt-a\"\nmodels = [\"local-x\"]\nbase_url = \""+fake.srv.URL+"/v1\"\n"), 0o644))
	var out, errb strings.Builder
	e := &env{stdin: strings.NewReader("/model\n/model gpt-bb\n/model gpt-b\n/model unlisted-one --force\n"), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return vars[k] }, cwd: root, terminal: true}
	require.Equal(t, 0, run(context.Background(), e, nil), errb.String())
	require.Contains(t, out.String(), "* 1. gpt-a\n  2. local-x\n  3. gpt-b\n", "the configured models, then the provider's")
	require.Contains(t, errb.String(), `openai does not list a model "gpt-bb", nor does the config: did you mean "gpt-b"`)
	require.Contains(t, out.String(), "model gpt-b (recorded")
	require.Contains(t, out.String(), "model unlisted-one (recorded")
	require.Equal(t, 1, fake.count(), "the list is fetched once")
	require.Equal(t, "/v1/models", fake.request(t, 0).path)

	var logs []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") && strings.Contains(p, "sessions") {
			logs = append(logs, p)
		}
		return err
	}))
	require.Len(t, logs, 1)
	var models []string
	for _, en := range entriesOfType(t, logs[0], "model_change") {
		models = append(models, en["model"].(string))
	}
	require.Equal(t, []string{"gpt-a", "gpt-b", "unlisted-one"}, models, "the refused name was never recorded")
}

// ACP's /model checks the name as the line loop's does: the refusal is
// the agent's message, in words, and nothing is recorded; --force takes
// it.
func TestACPModelChecksTheProvidersList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fake := newFake(t, reply{body: `{"object":"list","data":[{"id":"gpt-a","object":"model"},{"id":"gpt-b","object":"model"}]}`})
	h.env["OPENAI_API_KEY"] = "sk-test"
	c := h.acpStart("--provider", "openai", "--model", "gpt-a", "--base-url", fake.srv.URL+"/v1")
	c.initialize(map[string]any{})
	id := c.newSession(h.project, nil)
	resp, updates := c.prompt(id, "/model gpt-bb")
	require.Equal(t, "end_turn", stopReasonOf(t, resp))
	require.Contains(t, textOf(updates, "agent_message_chunk"), `openai does not list a model "gpt-bb", nor does the config: did you mean "gpt-b"`)
	_, updates = c.prompt(id, "/model")
	require.Contains(t, textOf(updates, "agent_message_chunk"), "* gpt-a\n  gpt-b\n")
	_, updates = c.prompt(id, "/model gpt-preview --force")
	require.Contains(t, textOf(updates, "agent_message_chunk"), "model gpt-preview (recorded")
	require.Equal(t, 0, c.close(), c.stderr.String())
	var models []string
	for _, en := range entriesOfType(t, h.sessionFiles()[0], "model_change") {
		models = append(models, en["model"].(string))
	}
	require.Equal(t, []string{"gpt-a", "gpt-preview"}, models)
	require.Equal(t, 1, fake.count(), "the list is fetched once")
}
