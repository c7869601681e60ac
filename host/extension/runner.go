package extension

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
)

// cmdRunner is go-plugin's process runner, written out here because
// go-plugin's own insists on handing the plugin panto's stdin (the user's
// terminal); ours gives it /dev/null and sets Pdeathsig.
type cmdRunner struct {
	logger hclog.Logger
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr io.ReadCloser
	pid    int
}

var _ runner.Runner = (*cmdRunner)(nil)

func newCmdRunner(logger hclog.Logger, cmd *exec.Cmd) (*cmdRunner, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	return &cmdRunner{logger: logger, cmd: cmd, stdout: stdout, stderr: stderr}, nil
}

func (c *cmdRunner) Start(context.Context) error {
	if err := c.cmd.Start(); err != nil {
		return err
	}
	c.pid = c.cmd.Process.Pid
	c.logger.Debug("extension started", "path", c.cmd.Path, "pid", c.pid)
	return nil
}

func (c *cmdRunner) Wait(context.Context) error { return c.cmd.Wait() }

func (c *cmdRunner) Kill(context.Context) error {
	if c.cmd.Process == nil {
		return nil
	}
	if err := c.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (c *cmdRunner) Stdout() io.ReadCloser { return c.stdout }
func (c *cmdRunner) Stderr() io.ReadCloser { return c.stderr }
func (c *cmdRunner) Name() string          { return c.cmd.Path }
func (c *cmdRunner) ID() string            { return fmt.Sprint(c.pid) }

func (c *cmdRunner) Diagnose(context.Context) string {
	return "the executable is not a panto extension, was built for another platform, or printed something to stdout before the go-plugin handshake line"
}

func (c *cmdRunner) PluginToHost(n, a string) (string, string, error) { return n, a, nil }
func (c *cmdRunner) HostToPlugin(n, a string) (string, string, error) { return n, a, nil }

func newSHA256() hash.Hash { return sha256.New() }
