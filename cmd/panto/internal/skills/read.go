package skills

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

// Place is a folder skills or templates are found in.
type Place struct {
	Layer layers.Name
	Dir   string
}

// readText reads a skill's or a template's file: a regular file of at
// most layers.MaxFileSize bytes, in UTF-8; a project's must stay in the
// project (root), all links followed. Errors name the file.
func readText(path string, layer layers.Name, root string) (string, error) {
	if layer == layers.Project {
		if err := inside(path, root); err != nil {
			return "", err
		}
	}
	b, err := layers.ReadFile(path, layers.MaxFileSize, layers.RegularOnly)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return "", err
		}
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%s: not valid UTF-8: save it as UTF-8", path)
	}
	return string(b), nil
}

// inside refuses path when, all links followed, it is not beneath root:
// a cloned repository's skill cannot be a link to the user's files.
func inside(path, root string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s: it is a link to %s, outside the project %s: a project's skills and templates must be in the project", path, real, root)
	}
	return nil
}

// entries lists dir's entries, sorted by name; a folder that does not
// exist has none.
func entries(dir string) ([]os.DirEntry, error) {
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	return es, nil
}
