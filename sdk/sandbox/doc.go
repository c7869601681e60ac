// Package sandbox confines the processes of a tool call to the boundary
// the user chose for it (an sdk.Sandbox): on Linux with Landlock, for
// what may be written and which TCP ports reached, and seccomp, for
// which sockets may be made at all.
//
// A tool calls Probe to learn whether this machine can sandbox, Apply
// in a helper process just before it starts the command (the helper and
// everything it starts stay confined; the calling tool process does
// not), and Blocked to tell the model, from a failed command's output,
// that the sandbox is the likely cause. Environ gives the child its
// temporary directory.
//
// What the sandbox does not do: it does not hide files from reading
// (everything the user can read stays readable, secrets included), and
// it restricts no other resource (CPU, memory, time). Policy — which
// roots are writable, whether the network is on — is the host's; this
// package only enforces the value it is given.
package sandbox
