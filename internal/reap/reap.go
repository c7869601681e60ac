// Package reap holds what a first-party extension needs to run a child
// under a reaper of its own — the extension's binary re-executed, in a
// process group of its own, that the system signals when the extension
// dies, and that adopts what the child leaves behind — so that nothing
// the child starts outlives panto: the tools extension's bash and the mcp
// extension's stdio servers. The reapers' programs are the extensions'
// own; this package is the system calls they share.
package reap
