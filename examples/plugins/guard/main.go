// Command guard asks the user before the model runs a risky shell
// command. It watches every call of the bash tool; when the command
// matches one of its patterns it asks (Host.Confirm) — the whole command
// in the question, the part that matched highlighted — and blocks the
// call unless the user says yes. With nobody to ask — print mode, --mode json
// — it blocks, unless the user configured confirm_default = "yes"; a
// question not answered in time blocks too.
//
// The patterns are Go regular expressions, one per line, in the
// environment variable PANTO_GUARD_PATTERNS; without it guard uses
// DefaultPatterns. Run it:
//
//	go build -o bin/ ./examples/plugins/guard
//	panto --extension bin/guard
//
// It also keeps a status segment — how many calls it asked about and
// how many it blocked — and notifies the user of each block.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/panto-dev/panto/sdk"
)

// DefaultPatterns are the commands guard asks about when
// PANTO_GUARD_PATTERNS is not set.
var DefaultPatterns = []string{
	`\brm\s+(-\S*\s+)*-\S*[rRf]`, // rm -r, rm -rf, rm -f
	`\bgit\s+push\b`,
	`\bgit\s+reset\s+--hard\b`,
	`\bsudo\b`,
	`\bcurl\b[^|]*\|\s*(ba|z)?sh\b`,
	`\bmkfs\b`,
	`\bdd\s+.*\bof=`,
	// panto's own configuration and data (the model's write and edit
	// refuse them; bash can still reach them): by their default names
	// and the variables that place them. panto's actual folders, as
	// PANTO_OWN_DIRS names them, are added to these (ownPatterns).
	`(\.config|\.local/share|\.local/state)/panto\b`,
	`\b(XDG_CONFIG_HOME|XDG_DATA_HOME|XDG_STATE_HOME|PANTO_HOME)\b`,
}

// ownDirsEnv is the variable in which panto names its own folders for
// every extension, separated by the system's list separator.
const ownDirsEnv = "PANTO_OWN_DIRS"

// ownPatterns are patterns matching each of panto's own folders, as
// ownDirsEnv's value v names them, written out.
func ownPatterns(v string) []string {
	var out []string
	for _, d := range filepath.SplitList(v) {
		if filepath.IsAbs(d) {
			out = append(out, regexp.QuoteMeta(filepath.Clean(d)))
		}
	}
	return out
}

type ext struct {
	sdk.Base
	patterns []*regexp.Regexp
	// bad is why the patterns did not compile: guard then blocks every
	// bash call rather than guard nothing.
	bad error

	mu             sync.Mutex
	asked, blocked int
}

var (
	_ sdk.Describer       = (*ext)(nil)
	_ sdk.ToolCallWatcher = (*ext)(nil)
)

func (*ext) Describe() sdk.Info {
	return sdk.Info{Name: "guard", Version: "1.0.0", Description: "asks before risky bash commands; blocks the ones the user declines"}
}

// ToolCall asks about a bash command that matches a pattern.
func (e *ext) ToolCall(ctx context.Context, h sdk.Host, call sdk.ToolCall) (sdk.ToolCallDecision, error) {
	if call.Name != "bash" {
		return sdk.ToolCallDecision{}, nil
	}
	var in struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		// Not ours to judge: the bash tool refuses bad input itself.
		return sdk.ToolCallDecision{}, nil
	}
	if e.bad != nil {
		return sdk.ToolCallDecision{Block: true, Reason: "guard blocked this command: " + e.bad.Error()}, nil
	}
	pat, part := e.find(in.Command)
	if pat == "" {
		return sdk.ToolCallDecision{}, nil
	}
	// The whole command, however long, and the part that matched
	// highlighted: the user judges what runs, not a summary of it.
	yes, err := h.Confirm(ctx, "Run this command?", fmt.Sprintf("%s\n\n(it matches guard's pattern %s)", in.Command, pat), sdk.Highlight(part))
	var why string
	switch {
	case err == nil && yes:
		e.count(false, ctx, h)
		return sdk.ToolCallDecision{}, nil
	case err == nil:
		why = "the user declined it"
	case errors.Is(err, sdk.ErrNoUser):
		why = "there is nobody to ask (set confirm_default = \"yes\" to allow such commands without asking)"
	case errors.Is(err, sdk.ErrNoAnswer):
		why = "the user did not answer in time"
	case errors.Is(err, sdk.ErrTooManyQuestions):
		why = "too many of guard's questions were waiting for the user"
	case errors.Is(err, sdk.ErrClosing):
		why = "the session is closing"
	default:
		why = "guard could not ask the user: " + err.Error()
	}
	e.count(true, ctx, h)
	_ = h.Notify(ctx, "warning", "blocked: "+oneLine(in.Command))
	return sdk.ToolCallDecision{Block: true, Reason: "guard blocked this command: " + why + ". Do not retry it; ask the user how to proceed."}, nil
}

// match returns the first pattern cmd matches, or "".
func (e *ext) match(cmd string) string {
	pat, _ := e.find(cmd)
	return pat
}

// find returns the first pattern cmd matches and the part of cmd it
// matched, or "", "".
func (e *ext) find(cmd string) (pattern, part string) {
	for _, p := range e.patterns {
		if loc := p.FindStringIndex(cmd); loc != nil {
			return p.String(), cmd[loc[0]:loc[1]]
		}
	}
	return "", ""
}

// count tallies one question and updates the status segment.
func (e *ext) count(blocked bool, ctx context.Context, h sdk.Host) {
	e.mu.Lock()
	e.asked++
	if blocked {
		e.blocked++
	}
	text := fmt.Sprintf("guard: %d asked, %d blocked", e.asked, e.blocked)
	e.mu.Unlock()
	_ = h.SetStatus(ctx, "guard", text)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// compile reads the patterns: spec's non-blank lines, or, when spec is
// blank, DefaultPatterns and the patterns of panto's own folders (own,
// ownDirsEnv's value).
func compile(spec, own string) ([]*regexp.Regexp, error) {
	lines := append(slices.Clip(DefaultPatterns), ownPatterns(own)...)
	if strings.TrimSpace(spec) != "" {
		lines = strings.Split(spec, "\n")
	}
	var out []*regexp.Regexp
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		re, err := regexp.Compile(l)
		if err != nil {
			return nil, fmt.Errorf("PANTO_GUARD_PATTERNS line %d: %w", i+1, err)
		}
		out = append(out, re)
	}
	return out, nil
}

func main() {
	pats, err := compile(os.Getenv("PANTO_GUARD_PATTERNS"), os.Getenv(ownDirsEnv))
	if err := sdk.Serve(&ext{patterns: pats, bad: err}); err != nil {
		log.Fatal(err)
	}
}
