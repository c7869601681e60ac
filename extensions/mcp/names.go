package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxToolName is the longest tool name both providers take
// (^[a-zA-Z0-9_-]{1,64}$).
const maxToolName = 64

// toolName is the name the model calls server's tool by:
// mcp__SERVER__TOOL, each character outside [a-zA-Z0-9_-] replaced by
// "_", and, when that is longer than 64 characters, cut to 57 with "_"
// and the first 6 hex digits of the sha256 of the full, unsanitized
// "SERVER\x00TOOL" after it, so two long names that share a beginning stay
// apart and a name is the same in every run.
func toolName(server, tool string) string {
	name := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(name) <= maxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:3])
	return name[:maxToolName-len(suffix)] + suffix
}

func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}
