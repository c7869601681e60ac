package extension

import (
	"context"
	"crypto/sha256"
	"hash"
	"io"
	"strconv"

	"github.com/hashicorp/go-plugin/runner"
)

// cmdRunner is go-plugin's view of an extension's process: a
// runner.Runner over our process, written out because go-plugin's own
// runner hands the plugin panto's stdin (the user's terminal), kills only
// the plugin's pid, and lets go-plugin wait for the EOF of pipes that a
// child of the plugin may hold forever. Ours gives it /dev/null, kills the
// whole process group, and hands go-plugin pipes that panto closes once
// the process is gone (see process).
type cmdRunner struct {
	p *process
}

var _ runner.Runner = (*cmdRunner)(nil)

func (c *cmdRunner) Start(context.Context) error {
	if err := c.p.start(); err != nil {
		return err
	}
	c.p.logger.Debug("extension started", "path", c.p.cmd.Path, "pid", c.p.pid)
	return nil
}

// Wait returns once the process is reaped (or given up on).
func (c *cmdRunner) Wait(context.Context) error {
	<-c.p.exited
	return c.p.exitErr()
}

// Kill kills the whole process group; it does not wait.
func (c *cmdRunner) Kill(context.Context) error {
	c.p.kill()
	return nil
}

func (c *cmdRunner) Stdout() io.ReadCloser { return c.p.hsR }
func (c *cmdRunner) Stderr() io.ReadCloser { return c.p.logR }
func (c *cmdRunner) Name() string          { return c.p.cmd.Path }

// ID is the pid, or "" before the start (go-plugin's Kill then has
// nothing to do).
func (c *cmdRunner) ID() string {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if !c.p.started {
		return ""
	}
	return strconv.Itoa(c.p.pid)
}

func (c *cmdRunner) Diagnose(context.Context) string {
	return "the executable is not a panto extension, was built for another platform, or printed something to stdout before the go-plugin handshake line"
}

func (c *cmdRunner) PluginToHost(n, a string) (string, string, error) { return n, a, nil }
func (c *cmdRunner) HostToPlugin(n, a string) (string, string, error) { return n, a, nil }

func newSHA256() hash.Hash { return sha256.New() }
