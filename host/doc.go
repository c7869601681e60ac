// Package host runs a panto session: it owns the conversation and its
// session log at run time, talks to the model providers, launches and
// kills extension binaries over go-plugin, and runs the agent loop.
//
// It builds on conversation, sessionlog, serializers and sdk; nothing
// below it imports it.
package host
