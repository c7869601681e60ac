//go:build !unix

package keys

// protectForcingReexec is Protect: outside unix there is no
// re-execution.
func protectForcingReexec() (*Keys, error) { return Protect() }
