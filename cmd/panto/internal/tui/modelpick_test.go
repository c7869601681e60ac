package tui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// modelFake is a session on fake-model whose configuration names
// fake-model (the default) and fake-model-2, and whose provider lists
// those and big-model.
func modelFake() *fakeSession {
	f := newFake()
	f.info.Model = "fake-model"
	f.configured = []string{"fake-model", "fake-model-2"}
	f.listed = []string{"fake-model", "fake-model-2", "big-model"}
	return f
}

// The picker offers the configured default after a switch away from it,
// and the provider's list beside config's models.
func TestModelPickerKeepsTheDefaultAndListsTheProvidersModels(t *testing.T) {
	t.Parallel()
	f := modelFake()
	h := newHarness(t, f)
	h.typ("/model")
	h.enter()
	s := h.screen()
	require.Contains(t, s, "* fake-model ")
	require.Contains(t, s, "big-model", "the provider's list is offered")
	h.typ("fake-model-2")
	h.enter()
	require.Equal(t, []string{"fake-model-2"}, f.models)
	require.Contains(t, h.screen(), "model fake-model-2 (recorded; a resume goes on with it)", "the switch is said")

	h.typ("/model")
	h.enter()
	s = h.screen()
	require.Contains(t, s, "* fake-model-2")
	require.Regexp(t, `\n\s*│?\s*fake-model\s+default`, s, "the configured default is still offered, and says so")
}

// A name typed whole wins over a longer one the filter lists first.
func TestModelPickerTakesTheExactTypedName(t *testing.T) {
	t.Parallel()
	f := modelFake()
	f.info.Model = "fake-model-2"
	h := newHarness(t, f)
	h.typ("/model")
	h.enter()
	h.typ("fake-model")
	h.enter()
	require.Equal(t, []string{"fake-model"}, f.models, "fake-model typed, fake-model-2 listed first: fake-model")
	require.Contains(t, h.screen(), "echo/fake-model ")
}

// The picker's hint is whole, not cut.
func TestModelPickerHintFits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, modelFake())
	h.typ("/model")
	h.enter()
	var hint string
	for _, l := range strings.Split(h.screen(), "\n") {
		if strings.Contains(l, "Enter switches") {
			hint = l
		}
	}
	require.Contains(t, hint, "Esc closes", "the hint is whole: %q", hint)
	require.NotContains(t, hint, "…")
}

// /model NAME refuses a name neither configured nor listed, with a
// did-you-mean, and records nothing; --force takes it.
func TestModelCommandRefusesAnUnknownName(t *testing.T) {
	t.Parallel()
	f := modelFake()
	h := newHarness(t, f)
	h.typ("/model nonexistent-model-xyz")
	h.enter()
	s := flat(h.screen())
	require.Contains(t, s, `does not list a model "nonexistent-model-xyz"`)
	require.Contains(t, s, "--force")
	require.Empty(t, f.models)

	h.typ("/model fake-modle-2")
	h.enter()
	require.Contains(t, flat(h.screen()), `did you mean "fake-model-2"`)
	require.Empty(t, f.models)

	h.typ("/model nonexistent-model-xyz --force")
	h.enter()
	require.Equal(t, []string{"nonexistent-model-xyz"}, f.models)
	require.Contains(t, h.screen(), "echo/nonexistent-model-xyz")

	// In the picker too: a typed name no row matches is checked.
	h.typ("/model")
	h.enter()
	h.typ("zzz-unknown")
	h.enter()
	require.Contains(t, flat(h.screen()), `does not list a model "zzz-unknown"`)
	require.Equal(t, []string{"nonexistent-model-xyz"}, f.models)
}

// flat is s with each run of white space one space: a line wrapped on
// screen reads as one.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
