package main

import "errors"

// mknodFull fails on Windows, which has no device nodes.
func mknodFull(string) error {
	return errors.New("no device nodes on Windows")
}
