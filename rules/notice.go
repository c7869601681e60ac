package rules

// The levels of a notice an extension shows the user (Host.Notify).
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"
)

// NoticeLevel is the level panto shows an extension's notice at: level
// itself when it is "warning" or "error", and "info" for anything else
// ("info", "", "shouting"). An extension cannot invent a level.
func NoticeLevel(level string) string {
	switch level {
	case NoticeWarning, NoticeError:
		return level
	}
	return NoticeInfo
}
