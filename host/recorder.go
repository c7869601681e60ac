package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host/extension"
	"github.com/panto-dev/panto/sessionlog"
)

// recorder is the session as its extensions see it: what they change and
// read through the Host service (extension.Recorder). It is handed to the
// extension host, and to nothing else, so nothing outside this package
// can record in an extension's name; an embedder sees the Session's own
// methods only. The transport's needs stay here, as terraform-plugin-go
// keeps its server interfaces apart from the SDK an author sees.
//
// A change an extension makes while the session opens waits until Open
// has set the session up (its prompt recorded, its variables known), so
// it is recorded after the start's lifecycle entry and rendered with
// every variable; reads and notices never wait. Once the log is closed a
// change fails with ErrClosed.
type recorder struct{ s *Session }

var _ extension.Recorder = recorder{}

// opened waits until Open has set the session up; ErrClosed when it
// failed.
func (s *Session) opened() error {
	<-s.ready
	if s.failed.Load() {
		return ErrClosed
	}
	return nil
}

// EditSystem records an unkeyed system block by the extension by, its
// variables rendered first; after a replace that is not bare, the live
// sections again (see replaceSystem).
func (r recorder) EditSystem(by string, e extension.Edit) error {
	if err := r.s.opened(); err != nil {
		return err
	}
	return r.s.editSystem(by, e)
}

// SetSection records by's section key with text (empty: removed).
func (r recorder) SetSection(by, key, text string) error {
	if err := r.s.opened(); err != nil {
		return err
	}
	return r.s.setSectionOf(by, key, text)
}

// Sections returns by's sections in the current prompt.
func (r recorder) Sections(by string) []extension.Section { return r.s.sectionsOf(by) }

// DisposeSections removes owner's sections on its behalf.
func (r recorder) DisposeSections(owner, why string) error {
	if err := r.s.opened(); err != nil {
		return err
	}
	return r.s.disposeSections(owner, why)
}

// Ask puts an extension's question to the user.
func (r recorder) Ask(ctx context.Context, by string, q extension.Question) (extension.Answer, error) {
	return r.s.ask(ctx, by, q)
}

// Notify shows an extension's notice.
func (r recorder) Notify(by, level, text string) { r.s.notify(by, level, text) }

// SetStatus sets an extension's status segment.
func (r recorder) SetStatus(by, key, text string) { r.s.setStatus(by, key, text) }

// EffectiveSystem returns the current system prompt.
func (r recorder) EffectiveSystem() []conversation.SystemText { return r.s.EffectiveSystem() }

// Messages returns the conversation's messages.
func (r recorder) Messages() []conversation.Message { return r.s.Messages() }

// AppendData records an extension_data entry for the extension.
func (r recorder) AppendData(by string, data json.RawMessage) error {
	if err := r.s.opened(); err != nil {
		return err
	}
	r.s.wmu.Lock()
	defer r.s.wmu.Unlock()
	if err := r.s.writeLocked([]sessionlog.Entry{sessionlog.ExtensionDataEntry(by, data)}, nil); err != nil {
		return fmt.Errorf("append data: %w", err)
	}
	return nil
}

// editSystem records an unkeyed system block on behalf of by (an
// extension's name), its variables rendered first.
func (s *Session) editSystem(by string, e extension.Edit) error {
	text := e.Text
	if s.render != nil {
		rendered, err := s.render(text, "extension "+by)
		if err != nil {
			s.emit(SystemRefused{By: by, Mode: e.Mode, Text: text, Err: err})
			return err
		}
		text = rendered
	}
	m := conversation.SystemMessage(text, e.Mode).WithSource(extensionSource(by))
	if e.Mode.Normalize() == conversation.ModeReplace && !e.Bare {
		return s.replaceSystem(by, m)
	}
	return s.record(by, m)
}
