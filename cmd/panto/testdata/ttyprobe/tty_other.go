//go:build !linux

package main

import "errors"

var errLinux = errors.New("ttyprobe: Linux only")

func probe(string, string, bool) Report {
	return Report{DevTTY: errLinux.Error(), PTS: errLinux.Error()}
}

func leaveGroup() error { return errLinux }
