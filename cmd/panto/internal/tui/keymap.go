package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
)

// Action is a key of the UI that [keys] in config.toml rebinds: its
// name there, the key it is by default, what it does. The editor's own
// keys (motions, deletions) and Enter, Esc, Ctrl-C and Ctrl-D are not
// among them.
type Action struct {
	Name    string
	Default tea.KeyPressMsg
	Does    string
}

// Actions are the UI's rebindable keys (docs/cli.md has the table: a
// test keeps them equal).
var Actions = []Action{
	{"external_editor", tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl}, "edit the message in $VISUAL or $EDITOR"},
	{"toggle_thinking", tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl}, "show every reply's thinking whole, or fold it"},
	{"expand", tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}, "expand or fold the nearest block"},
	{"expand_all", tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl | tea.ModShift}, "the whole transcript, every block expanded"},
	{"permission_mode", tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}, "the next permission mode"},
	{"redraw", tea.KeyPressMsg{Code: 'l', Mod: tea.ModCtrl}, "redraw the screen"},
	{"suspend", tea.KeyPressMsg{Code: 'z', Mod: tea.ModCtrl}, "suspend panto"},
}

// ActionsTable is the actions as docs/cli.md writes them.
func ActionsTable() string {
	var sb strings.Builder
	sb.WriteString("| action | default | does |\n| --- | --- | --- |\n")
	for _, a := range Actions {
		fmt.Fprintf(&sb, "| `%s` | `%s` | %s |\n", a.Name, a.Default.String(), a.Does)
	}
	return sb.String()
}

// keymap is [keys] applied: a key press bound to an action becomes the
// action's default key before anything takes it; an action's default
// key bound elsewhere (or unbound) does nothing.
type keymap struct {
	to  map[string]tea.KeyPressMsg
	off map[string]bool
}

// newKeymap makes the keymap of [keys] (action name to key, as
// config.NormalizeKey writes it; "" unbinds); it says what it could not
// take.
func newKeymap(keys map[string]string) (keymap, []string) {
	km := keymap{to: map[string]tea.KeyPressMsg{}, off: map[string]bool{}}
	var bad []string
	names := make([]string, len(Actions))
	for i, a := range Actions {
		names[i] = a.Name
	}
	for _, name := range slicesSorted(keys) {
		i := slices.IndexFunc(Actions, func(a Action) bool { return a.Name == name })
		if i < 0 {
			msg := fmt.Sprintf("config [keys]: no action %q", name)
			if s := app.Suggest(name, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			bad = append(bad, msg+"; the actions: "+strings.Join(names, ", "))
			continue
		}
		a, key := Actions[i], keys[name]
		if key == a.Default.String() {
			continue
		}
		km.off[a.Default.String()] = true
		if key != "" {
			km.to[key] = a.Default
		}
	}
	return km, bad
}

// apply is the key press k as the UI takes it; ok is false when it does
// nothing.
func (km keymap) apply(k tea.KeyPressMsg) (tea.KeyPressMsg, bool) {
	ks := k.String()
	if d, ok := km.to[ks]; ok {
		return d, true
	}
	if km.off[ks] {
		return k, false
	}
	return k, true
}

func slicesSorted(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
