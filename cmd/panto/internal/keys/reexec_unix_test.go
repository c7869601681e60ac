//go:build unix

package keys

import "errors"

// protectForcingReexec is Protect where the environment block cannot be
// written: it re-executes.
func protectForcingReexec() (*Keys, error) {
	return protect(func() error { return errors.New("forced") })
}
