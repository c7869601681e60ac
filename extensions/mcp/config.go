package main

import "github.com/panto-dev/panto/internal/mcpwire"

// The configuration panto hands the extension in Init: internal/mcpwire.
type (
	Config   = mcpwire.Config
	Server   = mcpwire.Server
	Duration = mcpwire.Duration
)
