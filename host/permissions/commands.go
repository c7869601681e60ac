package permissions

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A bash command line as the rules see it: every simple command it runs,
// each as its words joined by single spaces, after the VAR= prefixes and
// the wrappers that run their arguments (timeout, nice, nohup, env,
// command, exec, and the like) are taken off. Commands inside pipelines,
// lists, subshells, command substitutions, functions, loops and here-doc
// bodies are all found. A command that runs a command line of its own
// (bash -c, sh -c, eval, xargs, find -exec) is looked into when that line
// is literal text; when it is computed, or a command's name is computed,
// the line is opaque: the rules cannot say what it runs.

// Command is one simple command of a line.
type Command struct {
	// Words are its words, quotes removed; Text is them joined by single
	// spaces, what a bash rule's pattern is matched against.
	Words []string
	Text  string
	// Base is Text with the command's name without its directory
	// (/bin/rm -rf x is rm -rf x): deny and ask rules match it too, so
	// a path does not dodge them; allow rules match Text only.
	Base string
	// Carrier is set for a shell's -c and for eval with a literal line:
	// what it runs is among the commands, and an allow rule need not
	// match the carrier itself (deny and ask rules do).
	Carrier bool
}

// Line is a parsed bash command line.
type Line struct {
	Commands []Command
	// Opaque says why the line runs something the rules cannot see (a
	// computed command, bash -c "$x", eval "$x"), "" when it does not.
	Opaque string
	// Err is why the line does not parse; Commands is then empty.
	Err error
}

// maxDepth bounds how deep bash -c and eval are looked into.
const maxDepth = 4

// ParseLine splits a bash command line into its simple commands.
func ParseLine(line string) Line {
	var l Line
	l.parse(line, 0)
	return l
}

func (l *Line) parse(line string, depth int) {
	if depth > maxDepth {
		l.opaque("bash -c or eval nested more than %d deep", maxDepth)
		return
	}
	f, err := syntax.NewParser(syntax.KeepComments(false), syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		l.Commands, l.Err = nil, fmt.Errorf("the command line does not parse: %v", err)
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if l.Err != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			l.call(n, depth)
		case *syntax.DeclClause:
			// export/local/declare: assignments; their values' command
			// substitutions are walked into.
		case *syntax.TestClause, *syntax.ArithmCmd:
		}
		return true
	})
}

func (l *Line) opaque(format string, args ...any) {
	if l.Opaque == "" {
		l.Opaque = fmt.Sprintf(format, args...)
	}
}

// call adds one simple command.
func (l *Line) call(c *syntax.CallExpr, depth int) {
	if len(c.Args) == 0 {
		return // assignments only
	}
	words := make([]string, 0, len(c.Args))
	for i, w := range c.Args {
		s, ok := literal(w)
		if !ok {
			if i == 0 {
				l.opaque("the command's name is computed (%s)", source(w))
				return
			}
			s = source(w) // an argument: matched as written
		}
		words = append(words, s)
	}
	l.add(words, depth)
}

// add adds the command words, unwrapped, and looks into what it runs.
func (l *Line) add(words []string, depth int) {
	words = unwrap(words)
	if len(words) == 0 {
		return
	}
	name := base(words[0])
	text := strings.Join(words, " ")
	l.Commands = append(l.Commands, Command{Words: words, Text: text, Base: strings.Join(append([]string{name}, words[1:]...), " ")})
	last := len(l.Commands) - 1
	switch {
	case isShell(name):
		script, ok := dashC(words[1:])
		switch {
		case ok && script == "":
			l.opaque("%s -c runs a command line it is given", name)
		case ok:
			l.Commands[last].Carrier = true
			l.parse(script, depth+1)
		case len(afterOptions(words[1:], nil)) == 0:
			l.opaque("%s reads the commands it runs from its input", name)
		default:
			l.opaque("%s runs the script %s", name, afterOptions(words[1:], nil)[0])
		}
	case name == "source" || name == ".":
		l.opaque("%s runs the script %s", name, strings.Join(words[1:], " "))
	case name == "eval":
		l.Commands[last].Carrier = true
		l.parse(strings.Join(words[1:], " "), depth+1)
	case name == "xargs":
		if inner := afterOptions(words[1:], xargsArgs); len(inner) > 0 {
			l.add(inner, depth)
		}
	case name == "find":
		for _, inner := range findExec(words[1:]) {
			l.add(inner, depth)
		}
	}
}

// isShell reports whether name is a shell that runs -c's command line.
func isShell(name string) bool {
	switch name {
	case "bash", "sh", "dash", "zsh", "ksh", "ash", "busybox":
		return true
	}
	return false
}

// dashC returns the command line a shell's -c runs; ok is false without
// -c (a script file, or an interactive shell); "" when -c has no
// argument the rules can read.
func dashC(args []string) (script string, ok bool) {
	for i, a := range args {
		if a == "--" {
			return "", false
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", true
		}
		if !strings.HasPrefix(a, "-") {
			return "", false
		}
	}
	return "", false
}

// wrappers run their arguments as a command; the value is how many
// option arguments each option takes (-1: options are not parsed, the
// first word is the command).
var wrappers = map[string]map[string]int{
	"timeout": {"-s": 1, "--signal": 1, "-k": 1, "--kill-after": 1},
	"nice":    {"-n": 1, "--adjustment": 1},
	"nohup":   {},
	"env":     {"-u": 1, "--unset": 1, "-C": 1, "--chdir": 1, "-S": 1, "--split-string": 1},
	"command": {},
	"exec":    {"-a": 1},
	"time":    {"-f": 1, "-o": 1},
	"stdbuf":  {"-i": 1, "-o": 1, "-e": 1},
	"ionice":  {"-c": 1, "-n": 1},
	"sudo":    {"-u": 1, "-g": 1, "-C": 1, "-h": 1, "-p": 1, "-U": 1},
	"doas":    {"-u": 1, "-C": 1},
	"chrt":    {},
	"taskset": {},
	"builtin": {},
}

// unwrap takes VAR=value words and the wrappers off the front of words.
func unwrap(words []string) []string {
	for range 16 {
		for len(words) > 0 && isAssign(words[0]) {
			words = words[1:]
		}
		if len(words) == 0 {
			return nil
		}
		name := base(words[0])
		opts, ok := wrappers[name]
		if !ok {
			return words
		}
		rest := afterOptions(words[1:], opts)
		switch name {
		case "timeout":
			if len(rest) > 0 { // the duration
				rest = rest[1:]
			}
		case "taskset", "chrt":
			if len(rest) > 0 { // the mask or priority
				rest = rest[1:]
			}
		}
		if len(rest) == 0 {
			return words // the wrapper alone (env prints the environment)
		}
		words = rest
	}
	return words
}

// afterOptions skips the options at the front of args (those in takes
// take that many arguments), and a "--".
func afterOptions(args []string, takes map[string]int) []string {
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			return args[1:]
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return args
		}
		n := takes[a]
		if strings.HasPrefix(a, "--") && strings.Contains(a, "=") {
			n = 0 // --opt=value
		}
		args = args[1:]
		for ; n > 0 && len(args) > 0; n-- {
			args = args[1:]
		}
	}
	return args
}

// xargsArgs are xargs's options that take an argument.
var xargsArgs = map[string]int{"-n": 1, "-I": 1, "-L": 1, "-P": 1, "-d": 1, "-E": 1, "-s": 1, "-a": 1,
	"--max-args": 1, "--replace": 1, "--max-lines": 1, "--max-procs": 1, "--delimiter": 1, "--arg-file": 1}

// findExec returns the commands find's -exec, -execdir, -ok and -okdir
// run.
func findExec(args []string) [][]string {
	var out [][]string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" && args[j] != `\;` {
				j++
			}
			if j > i+1 {
				out = append(out, args[i+1:j])
			}
			i = j
		}
	}
	return out
}

func isAssign(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// base is a command's name without its directory (/bin/rm is rm).
func base(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// literal is the word's value when it is literal text (quotes removed);
// ok is false when part of it is computed (a variable, a substitution,
// arithmetic, a glob or brace expansion is kept as written).
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes of an unquoted literal.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// source is a word as written.
func source(w *syntax.Word) string {
	var b strings.Builder
	_ = syntax.NewPrinter().Print(&b, w)
	return b.String()
}
