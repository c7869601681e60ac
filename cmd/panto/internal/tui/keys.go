package tui

import (
	"fmt"
	"strings"
)

// Binding is one row of the key table: /help shows it, and docs/cli.md
// has the same table (a test keeps them equal).
type Binding struct {
	Keys, Does string
}

// Bindings are the keys of the full-screen mode.
var Bindings = []Binding{
	{"Enter", "send the message (or run the /command); while a turn runs, it is queued (shown above the editor) and sent when the turn ends"},
	{"Alt+Enter", "while a turn runs: steer — the message goes to the turn, read by the model after the tool calls running now, before its next request; idle: a new line"},
	{"Alt+↑", "take the queued and steered messages back into the editor, to edit or drop them (the turn goes on)"},
	{"Shift+Enter, Ctrl-J", "new line (Shift+Enter where the terminal tells it from Enter: kitty, ghostty, wezterm, foot, iTerm2, xterm, tmux)"},
	{"←/→, Ctrl-B/Ctrl-F", "a character left, right"},
	{"Alt-←/Alt-→, Alt-B/Alt-F, Ctrl-←/Ctrl-→", "a word left, right"},
	{"Home/End, Ctrl-A/Ctrl-E", "start, end of the line"},
	{"Ctrl-Home/Ctrl-End, Alt-</Alt->", "start, end of the message"},
	{"Backspace, Delete", "delete the character before, under the cursor"},
	{"Ctrl-K, Ctrl-U", "delete to the end of the line (at its end: join the next), to its start"},
	{"Ctrl-W, Alt-Backspace; Alt-D", "delete the word before; after"},
	{"Ctrl-Y", "put back what was deleted last"},
	{"↑/↓, Ctrl-P/Ctrl-N", "move a row; on the first (last) row: the previous (next) message sent in this project"},
	{"Tab", "complete the /command or the @path under the cursor"},
	{"/", "on an empty editor: the command palette (type to filter, ↑/↓, Enter runs, Tab completes)"},
	{"@", "complete a file path into the message"},
	{"Ctrl-V", "attach the clipboard's image to the next message (wl-paste, xclip, pngpaste or osascript); Backspace in an empty editor takes the last image off"},
	{"Esc", "interrupt the running turn (what was recorded stays valid; messages queued behind it go back into the editor, not sent); close a popup. Scrolled up on the alternate screen: back to the end first, a second Esc interrupts"},
	{"Ctrl-C", "interrupt the running turn; clear the editor; twice on an empty editor: quit. On a question: dismiss it, and a second Ctrl-C within 2 s quits whatever is asked"},
	{"Ctrl-D", "quit, when the editor is empty, a question up or not (otherwise delete the character under the cursor); mid-reply it stops the turn first, and a second Ctrl-D quits"},
	{"PgUp/PgDn, the mouse wheel", "the normal screen: PgUp opens the whole transcript (/transcript; the terminal's own scrollback holds it too). The alternate screen: scroll the transcript (PgDn at the end follows new output again)"},
	{"Ctrl-O", "expand or fold the block you read: a tool's output, thinking, a long message, a prompt change — the newest still in the frame, else the newest folded one in the scrollback, shown again whole; on the alternate screen the one in the middle of the screen when scrolled, the last on screen when not"},
	{"Ctrl-Shift-O", "every block expanded: the whole transcript on a page (the normal screen); expand or fold them all (the alternate screen)"},
	{"Ctrl-T", "show every reply's thinking whole (the replies to come too), or fold it again"},
	{"Ctrl-G", "edit the message in $VISUAL (or $EDITOR); what you save comes back into the editor"},
	{"Shift-Tab", "the next permission mode: default, accept-edits, plan, bypass (shown in the status line; /permissions)"},
	{"Ctrl-L", "redraw the screen"},
	{"Ctrl-Z", "suspend panto (fg resumes it)"},
}

// DialogBindings are the keys of the dialogs and pickers.
var DialogBindings = []Binding{
	{"y then Enter / n (or Enter = no)", "answer an extension's confirm, once it has been up 300 ms and nothing was typed for a second (keys before, and any letter, go to the editor); y only once all of a long one was on screen"},
	{"↑/↓, PgUp/PgDn, Home/End, the mouse wheel", "scroll a confirm's text; Tab goes to the next highlighted line not yet seen"},
	{"↑/↓, Enter", "choose in a select, the model picker, the palette"},
	{"Esc", "dismiss the question or close the picker (the extension is told it was dismissed)"},
	{"↑/↓, PgUp/PgDn, Home/End, q", "scroll /prompt, /context and /help; q or Esc closes them"},
}

// MarkdownTable is the key table as docs/cli.md writes it.
func MarkdownTable(bs []Binding) string {
	var sb strings.Builder
	sb.WriteString("| key | does |\n| --- | --- |\n")
	for _, b := range bs {
		fmt.Fprintf(&sb, "| %s | %s |\n", b.Keys, b.Does)
	}
	return sb.String()
}
