//go:build !linux

package main

import (
	"io/fs"
	"os"
)

// openUnnamed: only Linux has O_TMPFILE; elsewhere write and edit use a
// named temporary file.
func openUnnamed(string, fs.FileMode) (*os.File, error) { return nil, errNoTmpfile }

func linkUnnamed(*os.File, string) error { return errNoTmpfile }
