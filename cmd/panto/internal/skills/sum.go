package skills

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
)

// maxSumBytes bounds what ProjectSum reads: a project's skill folders
// holding more than this are refused rather than hashed (they would be
// a slow start every time).
const maxSumBytes = 64 << 20

// ProjectSum is the sha256 of everything a project's skills and
// templates consist of: every file under its skill and template folders
// (ProjectSkillPlaces, ProjectTemplatePlaces) — SKILL.md, the templates,
// and the scripts and references a skill bundles — each by its path
// relative to the project and its content; a symbolic link by where it
// points. A change of any of them changes the sum, so trusting a sum is
// trusting exactly these files. files is how many there are (0: the
// project has none).
func ProjectSum(d layers.Dirs) (sum []byte, files int, err error) {
	type file struct{ rel, sum string }
	var all []file
	total := int64(0)
	for _, p := range append(ProjectSkillPlaces(d), ProjectTemplatePlaces(d)...) {
		err := filepath.WalkDir(p.Dir, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && path == p.Dir {
					return fs.SkipDir
				}
				return err
			}
			rel, rerr := filepath.Rel(d.CWD, path)
			if rerr != nil {
				return rerr
			}
			switch {
			case e.IsDir():
				return nil
			case e.Type()&fs.ModeSymlink != 0:
				to, err := os.Readlink(path)
				if err != nil {
					return err
				}
				all = append(all, file{filepath.ToSlash(rel), "link " + to})
				return nil
			case !e.Type().IsRegular():
				all = append(all, file{filepath.ToSlash(rel), "special " + e.Type().String()})
				return nil
			}
			h := sha256.New()
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			n, err := io.Copy(h, io.LimitReader(f, maxSumBytes-total+1))
			f.Close()
			if err != nil {
				return err
			}
			if total += n; total > maxSumBytes {
				return fmt.Errorf("the project's skill and template folders hold more than %d MiB", maxSumBytes>>20)
			}
			all = append(all, file{filepath.ToSlash(rel), fmt.Sprintf("%x", h.Sum(nil))})
			return nil
		})
		if err != nil {
			return nil, 0, fmt.Errorf("sum the project's skills in %s: %w", p.Dir, err)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].rel < all[j].rel })
	h := sha256.New()
	for _, f := range all {
		fmt.Fprintf(h, "%s\x00%s\n", f.rel, f.sum)
	}
	return h.Sum(nil), len(all), nil
}
