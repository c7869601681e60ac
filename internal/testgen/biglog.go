package testgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// LogOptions shape a session log written by WriteLog.
type LogOptions struct {
	// Size is about how many bytes the log holds.
	Size int64
	// Kept is how many messages lie between the latest compaction's
	// first kept message and the leaf (that message included); the
	// compaction itself is recorded halfway. 0 writes no compaction at
	// all; otherwise earlier compactions are recorded every 100,000
	// messages too.
	Kept int
	// Branches is how many branches are left for another: each is a run
	// of 2,000 messages, a label, a move back to where it started, and a
	// branch summary on the new path.
	Branches int
	// Session is the header's session id; "" gives a fixed one.
	Session string
}

// LogInfo describes a log WriteLog wrote.
type LogInfo struct {
	// Bytes is the log's size; Entries counts its entries.
	Bytes   int64
	Entries int
	// Messages and System count the messages, and the system messages,
	// on the current branch (root to leaf).
	Messages, System int
	// Leaf is the last entry's id; FirstKept is the latest compaction's
	// first kept message ("" without compaction).
	Leaf, FirstKept string
}

// poolSize is how many distinct messages WriteLog cycles through.
const poolSize = 4000

// WriteLog writes a session log of about o.Size bytes to w, streaming: the
// shape of a long coding session resumed many times (Messages' turns, their
// system messages included, a lifecycle entry every 20,000 messages, an
// extension's state every 5,000, a model change now and then), with the
// compactions and branches o asks for. The lines are written in panto's
// layout (docs/session-format.md) by hand, so that this package needs no
// session log code; it is deterministic. Ids are 16 hex characters.
func WriteLog(w io.Writer, o LogOptions) (LogInfo, error) {
	pool := Messages(poolSize)
	bodies := make([][]byte, len(pool))
	system := make([]bool, len(pool))
	var total int
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, m := range pool {
		buf.Reset()
		if err := enc.Encode(m); err != nil {
			return LogInfo{}, err
		}
		bodies[i] = bytes.Clone(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		system[i] = m.Role == "system"
		total += len(bodies[i])
	}
	const head = len(`{"type":"message","id":"0123456789abcdef","parent_id":"0123456789abcdef","time":"2026-03-14T09:26:53.58979Z","message":}` + "\n")
	n := int(o.Size / int64(total/len(pool)+head)) // messages in all
	branchLen := 2000
	n -= o.Branches * branchLen
	n = max(n, o.Kept+10, 100)

	g := &gen{w: bufio.NewWriterSize(w, 1<<20), t: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC), r: rand.New(rand.NewPCG(3, 4))}
	if o.Session == "" {
		o.Session = "00000000-0000-4000-8000-000000000001"
	}
	k, _ := fmt.Fprintf(g.w, `{"type":"session","version":1,"id":"%s","created":"%s","cwd":"/home/user/project"}`+"\n", o.Session, g.t.Format(time.RFC3339Nano))
	g.info.Bytes = int64(k)
	// forks[k] is the message after which branch k leaves and comes back.
	forks := map[int]bool{}
	for k := range o.Branches {
		forks[n*(2*k+1)/(2*o.Branches+1)] = true
	}
	keptAt, compactAt := -1, -1
	if o.Kept > 0 {
		keptAt, compactAt = n-o.Kept, n-o.Kept/2
	}
	var ids []string // of the current branch's last 100,001 messages, for earlier compactions
	p := 0           // the next message of the pool
	for i := range n {
		if i == 1 {
			g.entry("lifecycle", `"event":"started","reseeded":true,"extensions":["gitbranch","todo"]`)
		}
		if i > 0 && i%20000 == 0 {
			g.entry("lifecycle", `"event":"resumed","reseeded":false,"extensions":["gitbranch","todo"]`)
		}
		if i > 0 && i%5000 == 0 {
			g.entry("extension_data", `"extension":"todo","data":{"items":["fix the test"],"n":`+strconv.Itoa(i)+`}`)
		}
		if i > 0 && i%300000 == 0 {
			g.entry("model_change", `"provider":"anthropic","model":"claude-sonnet-4-5"`)
		}
		if o.Kept > 0 && i > 0 && i%100000 == 0 && i < keptAt {
			g.entry("compaction", `"summary":"`+summary(g.r, 2000)+`","first_kept_id":"`+ids[len(ids)-20000]+`","tokens_before":160000`)
		}
		if i == compactAt {
			g.entry("compaction", `"summary":"the latest summary","first_kept_id":"`+g.info.FirstKept+`","tokens_before":160000`)
		}
		id := g.message(true, bodies[p], system[p])
		p = (p + 1) % len(bodies)
		if i == keptAt {
			g.info.FirstKept = id
		}
		if ids = append(ids, id); len(ids) > 100001 {
			ids = append(ids[:0], ids[len(ids)-20001:]...)
		}
		if forks[i] {
			fork := g.leaf
			for range branchLen {
				g.message(false, bodies[p], system[p])
				p = (p + 1) % len(bodies)
			}
			g.entry("label", `"target":"`+fork+`","label":"before the first try"`)
			left := g.leaf
			g.move(fork, left)
			g.entry("branch_summary", `"summary":"tried another way: `+summary(g.r, 300)+`","from":"`+left+`"`)
		}
	}
	g.info.Leaf = g.leaf
	if err := g.w.Flush(); err != nil {
		return LogInfo{}, err
	}
	return g.info, g.err
}

// gen writes the lines.
type gen struct {
	w    *bufio.Writer
	t    time.Time
	r    *rand.Rand
	seq  uint64
	leaf string
	info LogInfo
	err  error
	line []byte
}

// summary returns about n bytes of text as a JSON string's content.
func summary(r *rand.Rand, n int) string {
	b, _ := json.Marshal(Text(r, n))
	return string(b[1 : len(b)-1])
}

// nextID returns a new id: a bijection of a counter, so never twice.
func (g *gen) nextID() string {
	g.seq++
	z := g.seq * 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return fmt.Sprintf("%016x", z)
}

// begin starts a line of type typ after the leaf (or parent), and returns
// the new id.
func (g *gen) begin(typ, parent string) string {
	id := g.nextID()
	g.t = g.t.Add(10 * time.Millisecond)
	g.line = append(g.line[:0], `{"type":"`...)
	g.line = append(g.line, typ...)
	g.line = append(g.line, `","id":"`...)
	g.line = append(g.line, id...)
	if parent != "" {
		g.line = append(g.line, `","parent_id":"`...)
		g.line = append(g.line, parent...)
	}
	g.line = append(g.line, `","time":"`...)
	g.line = g.t.AppendFormat(g.line, time.RFC3339Nano)
	g.line = append(g.line, `",`...)
	return id
}

// end finishes the line and makes id the leaf.
func (g *gen) end(id string) {
	g.line = append(g.line, "}\n"...)
	if _, err := g.w.Write(g.line); err != nil && g.err == nil {
		g.err = err
	}
	g.info.Bytes += int64(len(g.line))
	g.info.Entries++
	g.leaf = id
}

func (g *gen) message(onBranch bool, body []byte, system bool) string {
	id := g.begin("message", g.leaf)
	g.line = append(g.line, `"message":`...)
	g.line = append(g.line, body...)
	g.end(id)
	if onBranch {
		g.info.Messages++
		if system {
			g.info.System++
		}
	}
	return id
}

// entry writes an entry of type typ with the given fields after the leaf.
func (g *gen) entry(typ, fields string) string {
	id := g.begin(typ, g.leaf)
	g.line = append(g.line, fields...)
	g.end(id)
	return id
}

func (g *gen) move(target, from string) {
	id := g.begin("move", target)
	g.line = append(g.line, `"from":"`...)
	g.line = append(g.line, from...)
	g.line = append(g.line, '"')
	g.end(id)
}
