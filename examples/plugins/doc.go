// Package plugins holds example extensions, one binary each in its own
// sub-directory, that the docs walk through and the tests run.
package plugins
