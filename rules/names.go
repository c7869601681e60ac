package rules

import (
	"fmt"
	"strings"
)

// ReservedName is the name no extension may take: panto's own, which
// labels panto's lines ("panto: …"), its system entries and its
// sections.
const ReservedName = "panto"

// CheckExtensionName checks the name an extension gives itself (in Init,
// or its executable's file name when it gives none): the tool-name rule —
// 1 to MaxToolName ASCII letters, digits, _ or - — and never panto's own
// name, in any case. The name labels what the user reads (notices,
// dialogs, "NAME: …" lines on stderr) and what the log records, so a name
// with a space, a newline or an escape in it, or one that poses as
// panto, could forge panto's own lines.
func CheckExtensionName(name string) error {
	if !ValidToolName(name, MaxToolName) {
		return fmt.Errorf("its name %q is not 1 to %d letters, digits, _ or -", name, MaxToolName)
	}
	if strings.EqualFold(name, ReservedName) {
		return fmt.Errorf("its name %q is panto's own; an extension may not take it", name)
	}
	return nil
}
