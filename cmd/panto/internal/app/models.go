package app

import "strings"

// ForceFlag after a model's name takes a name the provider does not list
// (/model NAME --force): every front end's /model reads it the same.
const ForceFlag = "--force"

// ModelArgs reads /model's arguments: the name, and whether --force
// (or -f) came with it, before or after.
func ModelArgs(args string) (name string, force bool) {
	var rest []string
	for _, w := range strings.Fields(args) {
		if w == ForceFlag || w == "-f" {
			force = true
			continue
		}
		rest = append(rest, w)
	}
	return strings.Join(rest, " "), force
}

// SetModel switches sess to name: checked against the configured models
// and the provider's list (Session.SetModel), or not when forced.
func SetModel(sess Session, name string, force bool) error {
	if force {
		return sess.ForceModel(name)
	}
	return sess.SetModel(name)
}
