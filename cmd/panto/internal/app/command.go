package app

import "strings"

// Command is a slash command typed in place of a message: "/name args".
type Command struct {
	// Name is what follows the slash, up to the first space, tab or line
	// break.
	Name string
	// Args is the rest, trimmed; it may hold line breaks (a command typed
	// in the UI's editor, or piped to print mode).
	Args string
}

// ParseCommand reads text as a slash command: every front end's one rule
// of what is a command and what is a message. Text that does not start
// with "/", or whose first word holds another slash ("/usr/bin is …",
// a path), is a message: ok is false. Text is taken as typed: the line
// loop trims a line before, the UI its editor's last line break.
func ParseCommand(text string) (c Command, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return Command{}, false
	}
	name, args, _ := strings.Cut(strings.TrimSpace(text[1:]), " ")
	name = strings.TrimSpace(name)
	if i := strings.IndexAny(name, "\n\r\t"); i >= 0 {
		args = name[i:] + " " + args
		name = name[:i]
	}
	if name == "" || strings.Contains(name, "/") {
		return Command{}, false
	}
	return Command{Name: name, Args: strings.TrimSpace(args)}, true
}

// IsQuit reports whether text is /quit or /exit, with nothing after it:
// how the user leaves a front end (the line loop, at a question too).
func IsQuit(text string) bool {
	c, ok := ParseCommand(strings.TrimSpace(text))
	return ok && c.Args == "" && (c.Name == "quit" || c.Name == "exit")
}
