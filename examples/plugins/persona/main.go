// Command persona is an extension that reacts to events on its own and
// keeps its system-prompt edits alive across resumes.
//
//	/persona NAME   choose a persona: the block "Persona: NAME" is appended
//	                to the system prompt, and {"persona": NAME} is recorded
//	                as this extension's data in the session log.
//
// The newest "Persona: " block is the one in force; earlier ones stay in
// the prompt and in the log, as every edit does (the log is append-only).
// Choosing the persona already in force (the newest persona block of the
// effective prompt) records nothing.
//
// Surviving a re-seed. A resume with unchanged prompt files keeps every
// edit. When the files changed, panto re-seeds the prompt with a replace
// (SessionStartEvent.Reseeded), which discards the persona block. On every
// resume persona therefore reads the conversation once (Host.Messages,
// which holds every system message ever recorded, also the discarded
// ones), finds the newest "Persona: " block, and appends it again if the
// effective prompt (conversation.EffectiveSystem over those messages) no
// longer holds it. If the conversation never chose a persona, it does
// nothing. The extension_data entries are for tools reading the log: the
// Host API cannot read them back.
//
// Long conversations. persona counts the model's replies (TurnEnd; on a
// resume it starts from the assistant messages already recorded). When
// the count reaches PANTO_PERSONA_THRESHOLD (default 20) it appends the
// note "This conversation is long; be concise." once; a resume puts it
// back if a re-seed discarded it. A threshold that is not a positive whole
// number is reported at session start (panto shows it) and 20 is used.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sdk"
)

const (
	// personaPrefix starts every persona block.
	personaPrefix = "Persona: "
	// longNote is added once the conversation is long.
	longNote = "This conversation is long; be concise."
	// thresholdEnv names the variable that sets the reply count at which
	// longNote is added.
	thresholdEnv     = "PANTO_PERSONA_THRESHOLD"
	defaultThreshold = 20
)

// ext is the persona extension. Hooks may run on different goroutines, so
// its state is guarded by mu.
type ext struct {
	sdk.Base
	threshold int
	configErr error // a bad setting, reported by SessionStart

	mu    sync.Mutex
	turns int  // the model's replies so far
	noted bool // longNote is in the prompt
}

var (
	_ sdk.Describer       = (*ext)(nil)
	_ sdk.SessionStarter  = (*ext)(nil)
	_ sdk.TurnEnder       = (*ext)(nil)
	_ sdk.CommandProvider = (*ext)(nil)
)

// newExt returns the extension configured from getenv. A threshold that
// is not a positive whole number leaves the default in force, and
// SessionStart reports it: panto shows a hook's error to the user.
func newExt(getenv func(string) string) *ext {
	e := &ext{threshold: defaultThreshold}
	if v := getenv(thresholdEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			e.configErr = fmt.Errorf("%s=%q: want a positive whole number of replies; using %d", thresholdEnv, v, defaultThreshold)
		} else {
			e.threshold = n
		}
	}
	return e
}

func (*ext) Describe() sdk.Info {
	return sdk.Info{Name: "persona", Version: "1.0.0", Description: "a persona that survives resumes; a note when the conversation grows long"}
}

// personaData is what /persona records in the session log.
type personaData struct {
	Persona string `json:"persona"`
}

func (e *ext) Commands() []sdk.Command {
	return []sdk.Command{{
		Name:        "persona",
		Description: "answer as a persona (kept across resumes)",
		Usage:       "NAME",
		Run:         e.choose,
	}}
}

func (e *ext) choose(ctx context.Context, h sdk.Host, req sdk.CommandRequest) (sdk.CommandResponse, error) {
	name := strings.TrimSpace(req.Args)
	if name == "" {
		return sdk.CommandResponse{}, errors.New("usage: /persona NAME (who the model should answer as)")
	}
	block := personaPrefix + name
	prompt, err := h.SystemPrompt(ctx)
	if err != nil {
		return sdk.CommandResponse{}, err
	}
	if lastPersona(prompt) == block {
		return sdk.CommandResponse{Output: "persona " + name + " already in force"}, nil
	}
	if err := h.AppendData(ctx, personaData{Persona: name}); err != nil {
		return sdk.CommandResponse{}, err
	}
	if err := h.AddSystemMessage(ctx, block); err != nil {
		return sdk.CommandResponse{}, err
	}
	return sdk.CommandResponse{Output: "persona set to " + name}, nil
}

// SessionStart restores what a re-seed discarded, from the conversation's
// history. A fresh session has nothing to restore.
func (e *ext) SessionStart(ctx context.Context, h sdk.Host, ev sdk.SessionStartEvent) (sdk.SessionStartResponse, error) {
	if err := e.restore(ctx, h, ev); err != nil {
		return sdk.SessionStartResponse{}, err
	}
	return sdk.SessionStartResponse{}, e.configErr
}

func (e *ext) restore(ctx context.Context, h sdk.Host, ev sdk.SessionStartEvent) error {
	if !ev.Resumed {
		return nil
	}
	msgs, err := h.Messages(ctx)
	if err != nil {
		return err
	}
	prompt := conversation.Texts(conversation.EffectiveSystem(msgs))
	if last := lastPersona(systemTexts(msgs)); last != "" && !slices.Contains(prompt, last) {
		h.Logger().Info("re-applying the persona a re-seed discarded", "block", last, "reseeded", ev.Reseeded)
		if err := h.AddSystemMessage(ctx, last); err != nil {
			return err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.turns = 0
	for _, m := range msgs {
		if m.Role == conversation.RoleAssistant {
			e.turns++
		}
	}
	e.noted = slices.Contains(prompt, longNote)
	return e.noteIfLong(ctx, h)
}

// TurnEnd counts the model's replies.
func (e *ext) TurnEnd(ctx context.Context, h sdk.Host, _ sdk.TurnEndEvent) (sdk.TurnEndResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.turns++
	return sdk.TurnEndResponse{}, e.noteIfLong(ctx, h)
}

// noteIfLong adds longNote once the reply count reaches the threshold.
// e.mu is held.
func (e *ext) noteIfLong(ctx context.Context, h sdk.Host) error {
	if e.noted || e.turns < e.threshold {
		return nil
	}
	if err := h.AddSystemMessage(ctx, longNote); err != nil {
		return err
	}
	e.noted = true
	return nil
}

// lastPersona returns the newest persona block of blocks, "" if there is
// none.
func lastPersona(blocks []string) string {
	for _, b := range slices.Backward(blocks) {
		if strings.HasPrefix(b, personaPrefix) {
			return b
		}
	}
	return ""
}

// systemTexts returns the text of every system block ever recorded in
// msgs, in order: also those a replace discarded since.
func systemTexts(msgs []conversation.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role != conversation.RoleSystem {
			continue
		}
		for _, b := range m.Content {
			if b.Type == conversation.TypeSystem {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

func main() {
	if err := sdk.Serve(newExt(os.Getenv)); err != nil {
		log.Fatal(err)
	}
}
