package main

import (
	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/lineloop"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
)

// Names the end-to-end tests use, for what moved out of package main to
// the app layer and the front ends (the tests themselves stay as they
// were: they are the CLI's contract).
type promptBlock = app.PromptBlock

var (
	noticeText = lineloop.NoticeText
	oneLine    = termtext.OneLine
)
