// Package trust records what the user trusted of a project. A cloned
// repository arrives with its .panto folder: binaries that would run as
// extensions, and settings that would steer panto. Neither counts until
// the user has trusted it, and each is trusted by its absolute path
// together with the sha256 of its content, so a file that changes after
// it was trusted is untrusted again.
//
// Two stores live in the user layer, one file each: trusted-extensions.json
// (project-layer extension binaries) and trusted-projects.json (project
// settings files such as .panto/config.toml). A store also remembers what
// the user declined, so panto does not ask again about the same content.
//
// What a trusted file may change is not decided here: package config says
// which settings a project can never set.
package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// The store files, in the user layer's directory.
const (
	ExtensionsFile = "trusted-extensions.json"
	ProjectsFile   = "trusted-projects.json"
	// MCPFile holds the trusted projects' .mcp.json files.
	MCPFile = "trusted-mcp.json"
	// SkillsFile holds the projects whose skills and templates the user
	// trusted, by a sum of all their files (skills.ProjectSum).
	SkillsFile = "trusted-skills.json"
)

// MaxStoreSize bounds a store file; a larger one is refused (it is ours,
// and holds a line per trusted file).
const MaxStoreSize = 4 << 20

// Status is what a store says of a file with a given content.
type Status int

// The statuses.
const (
	// Unknown: the user has not decided about this file.
	Unknown Status = iota
	// Trusted: trusted with exactly this content.
	Trusted
	// Changed: trusted once, with other content; it must be trusted
	// again.
	Changed
	// Declined: the user declined to trust this file with exactly this
	// content; panto does not ask again until it changes.
	Declined
)

func (s Status) String() string {
	switch s {
	case Trusted:
		return "trusted"
	case Changed:
		return "changed since it was trusted"
	case Declined:
		return "declined"
	}
	return "not trusted"
}

// Store is one store file's content: absolute paths and the sha256 (hex)
// of the content they were trusted (or declined) with.
type Store struct {
	Version  int               `json:"version"`
	Trusted  map[string]string `json:"trusted"`
	Declined map[string]string `json:"declined,omitempty"`

	path string
}

// Load reads the store file name in dir; a missing file is an empty
// store.
func Load(dir, name string) (*Store, error) {
	path := filepath.Join(dir, name)
	s := &Store{Version: 1, Trusted: map[string]string{}, path: path}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxStoreSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxStoreSize {
		return nil, fmt.Errorf("read %s: larger than %d bytes (fix or delete it; it lists what you trusted)", path, MaxStoreSize)
	}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("read %s: %w (fix or delete it; it lists what you trusted)", path, err)
	}
	if s.Trusted == nil {
		s.Trusted = map[string]string{}
	}
	s.path = path
	return s, nil
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Check says whether path, whose content has the sha256 sum, is trusted.
func (s *Store) Check(path string, sum []byte) Status {
	h := hex.EncodeToString(sum)
	if want, ok := s.Trusted[path]; ok {
		if want == h {
			return Trusted
		}
		return Changed
	}
	if s.Declined[path] == h {
		return Declined
	}
	return Unknown
}

// Trust records path as trusted with the content whose sha256 is sum.
func (s *Store) Trust(path string, sum []byte) {
	s.Trusted[path] = hex.EncodeToString(sum)
	delete(s.Declined, path)
}

// Decline records that the user declined path with this content.
func (s *Store) Decline(path string, sum []byte) {
	delete(s.Trusted, path)
	if s.Declined == nil {
		s.Declined = map[string]string{}
	}
	s.Declined[path] = hex.EncodeToString(sum)
}

// Revoke forgets path; it reports whether it was trusted.
func (s *Store) Revoke(path string) bool {
	_, ok := s.Trusted[path]
	delete(s.Trusted, path)
	delete(s.Declined, path)
	return ok
}

// Save writes the store back, whole (atomicfile: a temporary file in the
// same directory, 0600, renamed over the store), so a crash leaves the
// old store or the new one.
func (s *Store) Save() error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	return atomicfile.WriteFile(context.Background(), s.path, append(data, '\n'))
}

// MaxHashed bounds a file panto hashes to trust it: an extension binary
// or a settings file is far smaller, and a larger one (a sparse 16 GB
// file in a clone took 50 s to hash at every start) is refused.
const MaxHashed = 1 << 30

// FileSHA256 is the sha256 of the regular file at path, of at most
// MaxHashed bytes. Anything else — a FIFO (opened without blocking), a
// device such as /dev/zero, a larger file — is an error, at once.
func FileSHA256(path string) ([]byte, error) {
	f, st, err := layers.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > MaxHashed {
		return nil, fmt.Errorf("%s: %d bytes, larger than the %d MiB panto hashes to trust a file", path, st.Size(), MaxHashed>>20)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, MaxHashed+1)); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// Known reports whether the store holds path at all (trusted or
// declined, with any content): for a path it does not, there is nothing
// to hash the file against.
func (s *Store) Known(path string) bool {
	_, t := s.Trusted[path]
	_, d := s.Declined[path]
	return t || d
}

// Sum is the sha256 of data.
func Sum(data []byte) []byte {
	s := sha256.Sum256(data)
	return s[:]
}
