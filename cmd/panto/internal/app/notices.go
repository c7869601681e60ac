package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// tellStart tells the notices of the config: the project settings that
// did not count, and the settings that guard the user that changed since
// panto last ran (remembered in the state folder from run to run).
func (a *App) tellStart() {
	for _, n := range projectNotices(a.cfg.Project) {
		a.env.notify(n)
	}
	if n := a.sandboxNotice(); n != "" {
		a.env.notify(n)
	}
	prev, err := loadGuards(a.dirs)
	if err != nil {
		a.env.notify(err.Error())
	}
	for _, c := range a.cfg.Guards.Changed(prev) {
		was, now := c.Was, c.Now
		if was == "" {
			was = "not set"
		}
		if now == "" {
			now = "not set"
		}
		a.env.notify(fmt.Sprintf("%s in %s changed since panto last ran: now %s, was %s. If you did not change it, something else did (the model's tools can write your files): check the file",
			c.Key, c.Path, now, was))
	}
	if err := saveGuards(a.dirs, a.cfg.Guards); err != nil {
		a.env.notify(err.Error())
	}
}

// guardsFile is where panto remembers, from run to run, the settings
// that guard the user (config.GuardKeys), to say when they changed.
const guardsFile = "guards.json"

func loadGuards(d layers.Dirs) (config.Guards, error) {
	path := filepath.Join(d.State, guardsFile)
	data, err := layers.ReadFile(path, layers.MaxFileSize, layers.RegularOnly)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var g struct {
		Files config.Guards `json:"files"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("read %s: %w (delete it: panto writes it again)", path, err)
	}
	return g.Files, nil
}

func saveGuards(d layers.Dirs, g config.Guards) error {
	if g == nil {
		g = config.Guards{}
	}
	data, err := json.MarshalIndent(struct {
		Version int           `json:"version"`
		Files   config.Guards `json:"files"`
	}{1, g}, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(d.State, guardsFile)
	if err := os.MkdirAll(d.State, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteFile(context.Background(), path, append(data, '\n'))
}

// projectNotices say what of the project's config file did not count.
func projectNotices(p *config.Project) []string {
	if p == nil {
		return nil
	}
	if p.Err != nil {
		return []string{fmt.Sprintf("ignoring the project settings in %s: they are not trusted, and: %v", p.Path, p.Err)}
	}
	if !p.Applied {
		var keys []string
		for _, s := range p.Settings {
			k := s.Key
			if s.Table != "" {
				k = s.Table // an MCP server's fields are one thing it sets
			}
			if len(keys) == 0 || keys[len(keys)-1] != k {
				keys = append(keys, k)
			}
		}
		why := "they are not trusted"
		switch p.Status {
		case trust.Changed:
			why = "they changed since you trusted them"
		case trust.Declined:
			why = "you declined them"
		}
		return []string{fmt.Sprintf("ignoring the project settings in %s (%s; they would set %s): run 'panto trust' to review and trust them",
			p.Path, why, strings.Join(keys, ", "))}
	}
	var out []string
	for _, s := range p.Never() {
		out = append(out, fmt.Sprintf("ignoring %s in the project settings %s: %s", s.Key, p.Path, s.Never))
	}
	return out
}
