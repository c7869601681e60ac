package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/prices"
	"github.com/panto-dev/panto/cmd/panto/internal/skills"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/picker"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/theme"
	"github.com/panto-dev/panto/cmd/panto/internal/tui/transcript"
	"github.com/panto-dev/panto/host"
	"github.com/panto-dev/panto/sessionlog"
)

// builtin is one of panto's own commands.
type builtin struct {
	name, usage, desc string
	// now: runs even while a turn does (it only reads).
	now bool
}

var builtins = []builtin{
	{"help", "", "keys and commands", true},
	{"model", "[NAME]", "pick the model (recorded as model_change; a resume goes on with it); --force takes a name the provider does not list", false},
	{"prompt", "", "the system prompt the next request carries, each block with its source", true},
	{"context", "", "where the next request's tokens go: each system block, each extension's tools, the conversation, the window left", true},
	{"transcript", "", "the whole conversation of this run on a page, every block expanded (also PgUp, Ctrl-Shift-O)", true},
	{"tree", "[ID]", "the session tree: move to an earlier entry, label it, fork it; the prompt as of each entry beside it", false},
	{"resume", "", "switch to another session of this directory", false},
	{"compact", "", "summarise older messages to free context (the prompt stays as it is)", false},
	{"session", "", "the session id, log and message count", true},
	{"permissions", "[mode MODE]", "what the tool calls run under: mode, rules, grants, sandbox (mode MODE switches; so does Shift+Tab)", true},
	{"label", "[TEXT]", "label the current entry (no TEXT removes its label)", false},
	{"fork", "", "copy this conversation into a new session and switch to it", false},
	{"new", "", "start a new session in this directory and switch to it", false},
	{"name", "[TEXT]", "name the session, recorded in its log (shown by /resume and panto session list); no TEXT shows the name", false},
	{"export", "[PATH]", "write the session as HTML to PATH (default: beside the log) and print the path", true},
	{"copy", "[N]", "copy the last reply to the clipboard; N: the Nth-last block (a reply, a tool's output, your message)", true},
	{"extensions", "", "the extensions and their state (/extensions disable NAME goes on without one for this session)", true},
	{"reload", "", "restart every extension and read config and prompt files again (what changed is recorded)", false},
	{"skills", "", "the skills the model can read (/skill:NAME [args] loads one into your message)", true},
	{"quit", "", "leave (also Ctrl-D on an empty editor)", true},
}

func builtinNamed(name string) (builtin, bool) {
	if name == "exit" {
		name = "quit"
	}
	for _, b := range builtins {
		if b.name == name {
			return b, true
		}
	}
	return builtin{}, false
}

// commandDoneMsg is a command's end.
type commandDoneMsg struct {
	name   string
	output string
	err    error
	// compact is set for /compact.
	compact *host.CompactResult
	// model is the model /model switched to.
	model string
	// move is a /tree jump's end.
	move *moveDoneMsg
}

// command runs /name args.
func (m *Model) command(name, args string) tea.Cmd {
	b, isBuiltin := builtinNamed(name)
	if isBuiltin && b.now {
		return m.runBuiltin(b.name, args)
	}
	if m.sess == nil || m.busy != idle {
		// After the turn (or the start), shown queued above the editor.
		m.queued = append(m.queued, queuedMsg{text: "/" + strings.TrimSpace(name+" "+args)})
		m.list.Changed()
		return nil
	}
	if isBuiltin {
		return m.runBuiltin(b.name, args)
	}
	for _, c := range m.sess.Commands() {
		if c.Name == name {
			return m.runExtension(name, args)
		}
	}
	if cat, ok := m.o.App.(catalog); ok {
		in, ok, err := cat.Expand(app.Command{Name: name, Args: args}, "/"+name+" "+args)
		if err != nil {
			m.say(transcript.Error, errText(err))
			return nil
		}
		if ok {
			return m.sendWith(in)
		}
	}
	m.unknownCommand(name)
	return nil
}

// catalog is an App that has skills and prompt templates; *app.App is
// one.
type catalog interface {
	SkillsList() string
	OfferedTemplates(builtins []string, s app.Session) ([]skills.Template, []string)
	Skills() []skills.Skill
	Expand(c app.Command, typed string) (host.TurnInput, bool, error)
}

// builtinNames are the names a template cannot take here.
func builtinNames() []string {
	names := []string{"exit"}
	for _, b := range builtins {
		names = append(names, b.name)
	}
	return names
}

// offeredTemplates are the templates the palette offers: none without a
// catalog or before the session opened (an extension's command may take
// a name). A clash not told yet is told.
func (m *Model) offeredTemplates() []skills.Template {
	cat, ok := m.o.App.(catalog)
	if !ok || m.sess == nil {
		return nil
	}
	ts, notices := cat.OfferedTemplates(builtinNames(), m.sess)
	for _, n := range notices {
		m.say(transcript.Warning, termtext.Line(n))
	}
	return ts
}

func (m *Model) runBuiltin(name, args string) tea.Cmd {
	if cmd, ok := m.keysBuiltin(name, args); ok {
		return cmd
	}
	switch name {
	case "quit":
		return m.quit()
	case "help":
		m.ov = m.helpPage()
		return nil
	case "transcript":
		return m.openTranscript(true)
	case "prompt":
		if m.sess == nil {
			m.say(transcript.Quiet, "the session is still starting: /prompt in a moment")
			return nil
		}
		m.ov = newPromptPager(m.sess.EffectiveSystem(), m.prompts.long)
		return nil
	case "context":
		if m.sess == nil {
			m.say(transcript.Quiet, "the session is still starting: /context in a moment")
			return nil
		}
		m.ov = newContextPage(m.contextBreakdown())
		return nil
	case "session":
		return m.sessionCmd()
	case "permissions":
		if m.sess == nil {
			m.say(transcript.Quiet, "the session is still starting: /permissions in a moment")
			return nil
		}
		out, err := app.PermissionsCommand(m.sess, strings.TrimSpace(args))
		if err != nil {
			m.say(transcript.Error, err.Error())
			return nil
		}
		m.add(&transcript.Text{Title: "/permissions", Body: out})
		m.refreshPermissionMode()
		return nil
	case "compact":
		return m.startBusy(compacting, "compacting", func(ctx context.Context) commandDoneMsg {
			res, err := m.sess.Compact(ctx)
			return commandDoneMsg{name: "compact", err: err, compact: &res}
		})
	case "tree":
		return m.treeCmd(args)
	case "label":
		return m.labelCmd(args)
	case "fork":
		return m.fork(strings.TrimSpace(args))
	case "resume":
		return m.resumeCmd(args)
	case "reload":
		return m.reloadCmd()
	case "skills":
		cat, ok := m.o.App.(catalog)
		if !ok {
			m.say(transcript.Error, "/skills: this panto has no skills")
			return nil
		}
		m.add(&transcript.Text{Title: "/skills", Body: termtext.Sanitize(cat.SkillsList())})
		return nil
	case "extensions":
		if m.sess == nil {
			m.say(transcript.Quiet, "the session is still starting: /extensions in a moment")
			return nil
		}
		out, err := app.ExtensionsCommand(m.sess, args)
		if err != nil {
			m.say(transcript.Error, errText(err))
			return nil
		}
		m.add(&transcript.Text{Title: "/extensions", Body: termtext.Sanitize(out)})
		return nil
	case "model":
		if args == "" {
			// The configured models at once; the provider's list when
			// it comes (modelListMsg).
			m.ov = newModelPicker(m.modelItems(), m.status.model)
			sess, ctx := m.sess, m.ctx
			return func() tea.Msg { return modelListMsg{list: sess.Models(ctx)} }
		}
		return m.setModel(args)
	}
	return nil
}

// modelListMsg is the models /model offers, the provider's list fetched
// (Session.Models).
type modelListMsg struct{ list host.ModelList }

// modelList takes the provider's list: kept for /model N, and shown in
// the picker if it is still open.
func (m *Model) modelList(msg modelListMsg) {
	m.listed = &msg.list
	if p, ok := m.ov.(*modelPicker); ok {
		p.setItems(m.modelItems())
	}
}

// setModel switches the model, by name or by its number in the list;
// --force takes a name the provider does not list.
func (m *Model) setModel(arg string) tea.Cmd {
	name, force := app.ModelArgs(arg)
	if name == "" {
		m.say(transcript.Error, "/model --force: which model? (/model NAME --force)")
		return nil
	}
	models := m.modelItems()
	if n, err := strconv.Atoi(name); err == nil {
		if n < 1 || n > len(models) {
			m.say(transcript.Error, fmt.Sprintf("/model %d: want 1 to %d", n, len(models)))
			return nil
		}
		name = models[n-1].Title
	}
	sess := m.sess
	return func() tea.Msg {
		err := app.SetModel(sess, name, force)
		return commandDoneMsg{name: "model", err: err, model: name}
	}
}

// modelItems are the models /model offers, each once: the one in use,
// the configured default and config's models, then the provider's list
// once fetched; each says which it is.
func (m *Model) modelItems() []picker.Item {
	configured := m.o.Models
	if m.listed != nil && len(m.listed.Configured) > 0 {
		configured = m.listed.Configured // the session's word on it
	}
	names := append([]string{m.status.model}, configured...)
	if m.listed != nil {
		names = append(names, m.listed.Listed...)
	}
	var out []picker.Item
	for _, name := range names {
		if name == "" || slices.ContainsFunc(out, func(it picker.Item) bool { return it.Title == name }) {
			continue
		}
		it := picker.Item{Title: name}
		var desc []string
		if name == m.status.model {
			it.Mark = "*"
			desc = append(desc, "in use")
		}
		switch i := slices.Index(configured, name); {
		case i == 0:
			desc = append(desc, "default")
		case i > 0:
			desc = append(desc, "config")
		}
		it.Desc = strings.Join(desc, ", ")
		out = append(out, it)
	}
	return out
}

func (m *Model) runExtension(name, args string) tea.Cmd {
	return m.startBusy(commanding, "/"+name, func(ctx context.Context) commandDoneMsg {
		out, err := m.sess.RunCommand(ctx, name, args)
		return commandDoneMsg{name: name, output: out, err: err}
	})
}

// startBusy runs f in the background as the session's work of the
// moment; Esc interrupts it.
func (m *Model) startBusy(b busy, what string, f func(ctx context.Context) commandDoneMsg) tea.Cmd {
	ctx, cancel := context.WithCancelCause(m.ctx)
	m.cancel = func() { cancel(errInterrupted) }
	m.busy, m.busyWhat, m.busySince = b, what, m.now()
	return tea.Batch(func() tea.Msg { return f(ctx) }, m.ensureTick())
}

func (m *Model) commandDone(msg commandDoneMsg) tea.Cmd {
	switch {
	case msg.name == "model":
		if msg.err != nil {
			m.say(transcript.Error, "/model: "+errText(msg.err))
		} else if m.sess.Info().Model != m.status.model {
			m.say(transcript.Quiet, "model "+termtext.Line(m.sess.Info().Model)+" (recorded; a resume goes on with it)")
		}
		m.status.model = m.sess.Info().Model
		return m.next()
	case msg.move != nil:
		m.endBusy()
		return tea.Batch(m.moveDone(msg.move), m.usageCmd(), m.next())
	case msg.compact != nil:
		m.endBusy()
		switch {
		case errors.Is(msg.err, host.ErrNothingToCompact):
			m.say(transcript.Quiet, "nothing to compact yet: the conversation is shorter than what is kept")
		case msg.err != nil:
			// CompactionDone said it.
		default:
			m.say(transcript.Quiet, fmt.Sprintf("the next request sends %d messages instead of %d",
				msg.compact.MessagesAfter, msg.compact.MessagesBefore))
		}
		return tea.Batch(m.usageCmd(), m.next())
	}
	m.endBusy()
	if msg.output != "" {
		m.add(&transcript.Text{Title: "/" + msg.name, Body: msg.output})
	}
	if msg.err != nil {
		if errors.Is(msg.err, host.ErrNoCommand) {
			m.unknownCommand(msg.name)
		} else {
			m.say(transcript.Error, "/"+msg.name+": "+errText(msg.err))
		}
	}
	return tea.Batch(m.usageCmd(), m.next())
}

// helpPage is /help: the commands, then the keys, each description
// wrapped under itself.
func (m *Model) helpPage() *pager {
	var cmds []Binding
	for _, b := range builtins {
		u := "/" + b.name
		if b.usage != "" {
			u += " " + b.usage
		}
		cmds = append(cmds, Binding{u, b.desc})
	}
	var ext []Binding
	if m.sess != nil {
		for _, c := range m.sess.Commands() {
			// An extension's texts: shown through termtext.
			u := "/" + c.Name
			if c.Usage != "" {
				u += " " + c.Usage
			}
			ext = append(ext, Binding{termtext.Line(u), termtext.Line(c.Description + " (" + c.Extension + ")")})
		}
	}
	p := &pager{name: "/help", hint: "keys and commands"}
	p.render = func(th *theme.Theme, width int) []string {
		var out []string
		section := func(title string, bs []Binding) {
			if len(bs) == 0 {
				return
			}
			if len(out) > 0 {
				out = append(out, "")
			}
			out = append(out, th.AccentBold.Render(title))
			out = append(out, table(th, bs, width)...)
		}
		section("Commands", cmds)
		section("Extension commands", ext)
		section("Keys", Bindings)
		section("In dialogs, pickers and pages", DialogBindings)
		return out
	}
	return p
}

// table lays bindings out in two columns, the second wrapped.
func table(th *theme.Theme, bs []Binding, width int) []string {
	kw := 0
	for _, b := range bs {
		kw = max(kw, ansi.StringWidth(b.Keys))
	}
	kw = min(kw, width/3)
	var out []string
	for _, b := range bs {
		keys := b.Keys
		if ansi.StringWidth(keys) > kw {
			out = append(out, "  "+th.Bold.Render(keys))
			keys = ""
		}
		desc := strings.Split(ansi.Wrap(b.Does, max(10, width-kw-4), ""), "\n")
		for i, d := range desc {
			k := ""
			if i == 0 {
				k = keys
			}
			out = append(out, "  "+th.Bold.Render(theme.Pad(k, kw))+"  "+d)
		}
	}
	return out
}

// sessionMsg is /session's text, with the log's tokens and cost.
type sessionMsg struct{ text string }

// sessionCmd shows /session once the log's tokens are summed (the
// summary beside the log, read off the UI's loop).
func (m *Model) sessionCmd() tea.Cmd {
	text := m.sessionText()
	if m.sess == nil {
		m.add(&transcript.Text{Title: "/session", Body: text})
		return nil
	}
	path := m.sess.Info().Path
	if path == "" {
		// Nothing recorded: this run's requests, as the status line
		// counts them.
		m.add(&transcript.Text{Title: "/session", Body: text + m.status.totals()})
		return nil
	}
	tab := m.o.Prices
	return func() tea.Msg {
		sum, err := sessionlog.CachedSummary(path)
		if err != nil {
			return sessionMsg{text + "tokens  unknown (" + termtext.OneLine(err.Error(), 200) + ")\n"}
		}
		return sessionMsg{text + totalsText(tab.Sum(sum.Usage))}
	}
}

// totalsText is /session's lines of tokens and cost: of the log's every
// branch, or of this run when nothing is recorded.
func totalsText(s prices.Sum) string {
	u := s.Usage
	var sb strings.Builder
	fmt.Fprintf(&sb, "tokens  %d in, %d out", u.InputTokens, u.OutputTokens)
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		fmt.Fprintf(&sb, ", %d cache read, %d cache write", u.CacheReadTokens, u.CacheWriteTokens)
	}
	sb.WriteString("\n")
	if s.CostKnown {
		fmt.Fprintf(&sb, "cost    $%.3f\n", s.CostUSD)
	} else if u != (sessionlog.Usage{}) {
		sb.WriteString("cost    unknown: a model's price is not known (config [prices])\n")
	}
	return sb.String()
}

func (m *Model) sessionText() string {
	if m.sess == nil {
		return "the session is still starting"
	}
	info := m.sess.Info()
	var sb strings.Builder
	fmt.Fprintf(&sb, "session %s\n", info.ID)
	if info.Path == "" {
		sb.WriteString("log     not recorded (--no-session)\n")
	} else {
		// On a line of its own: a path wrapped at the screen's edge
		// cannot be copied whole.
		fmt.Fprintf(&sb, "log\n  %s\n", info.Path)
	}
	fmt.Fprintf(&sb, "messages %d\n", len(m.sess.Messages()))
	fmt.Fprintf(&sb, "model   %s/%s\n", info.Provider, info.Model)
	ext := "none"
	if len(info.Extensions) > 0 {
		ext = strings.Join(info.Extensions, ", ")
	}
	fmt.Fprintf(&sb, "extensions %s\n", ext)
	if m.o.Version != "" {
		fmt.Fprintf(&sb, "panto   %s\n", m.o.Version)
	}
	return sb.String()
}

// refreshPermissionMode shows the session's permission mode in the
// status line.
func (m *Model) refreshPermissionMode() {
	if m.sess == nil {
		return
	}
	st, _, ok := m.sess.PermissionState()
	m.status.perm = ""
	if ok {
		m.status.perm = st.Mode
	}
}

// cyclePermissionMode is Shift+Tab: the next permission mode, recorded.
func (m *Model) cyclePermissionMode() {
	if m.sess == nil {
		return
	}
	st, _, ok := m.sess.PermissionState()
	if !ok {
		m.say(transcript.Quiet, "this session decides no tool calls: there is no permission mode to switch")
		return
	}
	next := app.NextMode(st.Mode)
	if err := m.sess.SetPermissionMode(next); err != nil {
		m.say(transcript.Error, "permission mode: "+err.Error())
		return
	}
	m.refreshPermissionMode()
	note := ""
	if next == "bypass" {
		note = ": every call runs that no rule denies or asks about (only the sandbox holds)"
	}
	m.say(transcript.Quiet, "permission mode "+string(next)+note+" · Shift+Tab for the next")
}
