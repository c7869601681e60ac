package app

import (
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/trust"
)

// ProjectTrust is the user's trust of a project's settings (its
// .panto/config.toml): what panto trust shows and changes, and what the
// question before an interactive session asks about. The trust is kept
// in the user layer (trust.ProjectsFile).
type ProjectTrust struct {
	// Project is the project file's part of the config a session with
	// the layers would load, checked against the trust kept: nil when the
	// project has no settings file.
	Project *config.Project
	store   *trust.Store
}

// LoadProjectTrust loads the config of a session with the layers d as a
// session would, and the trust of its project settings.
func LoadProjectTrust(env Env, d layers.Dirs) (*ProjectTrust, error) {
	store, err := trust.Load(d.Layer(layers.User), trust.ProjectsFile)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(d, config.Options{Trust: store, KeyEnv: func(p string) string { return keyInEnv(env, p) }})
	if err != nil {
		return nil, err
	}
	return &ProjectTrust{Project: cfg.Project, store: store}, nil
}

// Trust trusts the project settings as they are now (by their sha256:
// once the file changes they are untrusted again) and saves the trust.
func (t *ProjectTrust) Trust() error {
	t.store.Trust(t.Project.Path, t.Project.Sum)
	return t.store.Save()
}

// Decline remembers that the user said no to the settings as they are
// now, so panto does not ask again until the file changes.
func (t *ProjectTrust) Decline() error {
	t.store.Decline(t.Project.Path, t.Project.Sum)
	return t.store.Save()
}

// RevokeProjectTrust untrusts the project settings of the layers d, and
// forgets a decline of them (panto asks again). It returns the settings
// file's path and whether it was trusted.
func RevokeProjectTrust(d layers.Dirs) (path string, was bool, err error) {
	store, err := trust.Load(d.Layer(layers.User), trust.ProjectsFile)
	if err != nil {
		return "", false, err
	}
	path = config.Path(d.Layer(layers.Project))
	was = store.Revoke(path)
	return path, was, store.Save()
}

// TrustedProject is a project settings file the user trusted, and what
// it is now.
type TrustedProject struct {
	Path string
	// Status is "trusted", "changed (untrusted)" (the file changed
	// since), "gone" or "unreadable".
	Status string
}

// TrustedProjects are the project settings files trusted in the user
// layer of d, by path.
func TrustedProjects(d layers.Dirs) ([]TrustedProject, error) {
	store, err := trust.Load(d.Layer(layers.User), trust.ProjectsFile)
	if err != nil {
		return nil, err
	}
	var out []TrustedProject
	for path := range store.Trusted {
		status := "trusted"
		if sum, err := trust.FileSHA256(path); errors.Is(err, os.ErrNotExist) {
			status = "gone"
		} else if err != nil {
			status = "unreadable"
		} else if store.Check(path, sum) != trust.Trusted {
			status = "changed (untrusted)"
		}
		out = append(out, TrustedProject{Path: path, Status: status})
	}
	slices.SortFunc(out, func(a, b TrustedProject) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
