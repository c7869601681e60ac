// Package extensions holds panto's first-party extensions, one binary
// each in its own sub-directory, built on the sdk exactly as a third
// party's extension would be.
package extensions
