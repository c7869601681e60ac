package host

import (
	"fmt"
	"sync"
	"time"
)

// An extension that asks again each time its question is dismissed —
// from a goroutine of its own, where no hook's bound holds it — would
// put a new question up after every Esc for as long as the session runs
// (the sixth adversary pass's B4). So when the user dismisses
// mutedAfter of one extension's questions in a row, each within
// muteWindow of the one before, panto stops showing that extension's
// questions for the rest of the session: each fails at once with
// ErrDismissed (a confirm is a no, so a guard blocks what it asks
// about), and a notice says so once. Only the user's own dismissals
// count (Question.DismissByUser): not those of a front end that closes a
// question nobody was asked (between turns, on quitting), nor a
// question's deadline passing; an answer starts the count again.

// mutedAfter is how many dismissals in a row mute an extension's
// questions; muteWindow how soon each must follow the one before.
const (
	mutedAfter = 3
	muteWindow = time.Minute
)

// mutes are, per extension, the user's dismissals of its questions. Its
// zero value is ready.
type mutes struct {
	mu sync.Mutex
	by map[string]*dismissals
}

type dismissals struct {
	n     int
	last  time.Time
	muted bool
}

func (m *mutes) of(by string) *dismissals {
	if m.by == nil {
		m.by = map[string]*dismissals{}
	}
	d := m.by[by]
	if d == nil {
		d = &dismissals{}
		m.by[by] = d
	}
	return d
}

// muted reports whether by's questions are no longer shown.
func (m *mutes) muted(by string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.of(by).muted
}

// dismissed counts a dismissal of one of by's questions by the user, at
// now; true when it mutes by's questions (once).
func (m *mutes) dismissed(by string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.of(by)
	if d.muted {
		return false
	}
	if d.n > 0 && now.Sub(d.last) > muteWindow {
		d.n = 0
	}
	d.n++
	d.last = now
	d.muted = d.n >= mutedAfter
	return d.muted
}

// answered starts by's count again: the user answered one of its
// questions.
func (m *mutes) answered(by string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.of(by).n = 0
}

// errMuted is what a question of a muted extension fails with.
func errMuted(by string) error {
	return fmt.Errorf("%w: panto no longer shows %s's questions in this session (the user dismissed %d in a row)", ErrDismissed, by, mutedAfter)
}

// mutedNotice is what the user is told, once, when by's questions are
// muted.
func mutedNotice(by string) string {
	return fmt.Sprintf("no more questions from %s in this session: you dismissed %d of them in a row. "+
		"Each one it asks now counts as dismissed at once (a confirm is a no, so a guard blocks what it asks about); "+
		"restart panto (panto -c continues this session) to be asked again", by, mutedAfter)
}
