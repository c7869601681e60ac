package lineloop

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/host"
)

// jsonVersion is the version of the --mode json schema (docs/cli.md). It
// changes when a field changes meaning or goes away; new fields and new
// event types may appear within a version, so readers must ignore what
// they do not know.
const jsonVersion = 1

// jsonView writes every event as one JSON object on a line of its own:
// {"version":1,"type":"...",...}. The types and fields are documented in
// docs/cli.md ("--mode json").
type jsonView struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func newJSONView(w io.Writer) *jsonView {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &jsonView{enc: enc}
}

// jsonHead starts every line.
type jsonHead struct {
	Version int    `json:"version"`
	Type    string `json:"type"`
}

func head(t string) jsonHead { return jsonHead{jsonVersion, t} }

// The lines, one type each.
type (
	jsonSession struct {
		jsonHead
		ID         string   `json:"id"`
		Path       string   `json:"path"`
		Resumed    bool     `json:"resumed"`
		Provider   string   `json:"provider"`
		Model      string   `json:"model"`
		Extensions []string `json:"extensions"`
	}
	jsonText struct {
		jsonHead
		Text string `json:"text"`
	}
	jsonReply struct {
		jsonHead
		Message    conversation.Message `json:"message"`
		StopReason string               `json:"stop_reason"`
	}
	jsonToolStart struct {
		jsonHead
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	jsonToolProgress struct {
		jsonHead
		ID   string `json:"id"`
		Name string `json:"name"`
		// Text is the output since the call's previous tool_progress.
		Text      string `json:"text"`
		ElapsedMS int64  `json:"elapsed_ms"`
	}
	jsonToolEnd struct {
		jsonHead
		ID         string `json:"id"`
		Name       string `json:"name"`
		IsError    bool   `json:"is_error"`
		DurationMS int64  `json:"duration_ms"`
		Lines      int    `json:"lines"`
		Excerpt    string `json:"excerpt"`
		Result     string `json:"result"`
	}
	jsonSystem struct {
		jsonHead
		By     string `json:"by"`
		Mode   string `json:"mode"`
		Key    string `json:"key,omitempty"`
		Text   string `json:"text"`
		Source string `json:"source,omitempty"`
	}
	jsonRefused struct {
		jsonHead
		By    string `json:"by"`
		Mode  string `json:"mode"`
		Key   string `json:"key,omitempty"`
		Text  string `json:"text"`
		Error string `json:"error"`
	}
	jsonCompactionStart struct {
		jsonHead
		Auto   bool `json:"auto"`
		Tokens int  `json:"tokens"`
	}
	jsonCompactionDone struct {
		jsonHead
		Tokens int    `json:"tokens"`
		Error  string `json:"error,omitempty"`
	}
	jsonRetry struct {
		jsonHead
		Attempt int    `json:"attempt"`
		Max     int    `json:"max"`
		WaitMS  int64  `json:"wait_ms"`
		Reason  string `json:"reason"`
	}
	jsonUsage struct {
		jsonHead
		Model            string `json:"model"`
		InputTokens      int    `json:"input_tokens"`
		OutputTokens     int    `json:"output_tokens"`
		CacheReadTokens  int    `json:"cache_read_tokens"`
		CacheWriteTokens int    `json:"cache_write_tokens"`
		ReasoningTokens  int    `json:"reasoning_tokens"`
		// CostUSD is absent when the model's price is not known.
		CostUSD *float64 `json:"cost_usd,omitempty"`
	}
	jsonNotice struct {
		jsonHead
		Level string `json:"level"`
		Text  string `json:"text"`
		// By names the extension that sent it; absent for panto's own.
		By string `json:"by,omitempty"`
	}
	jsonMoved struct {
		jsonHead
		From    string `json:"from"`
		To      string `json:"to"`
		Left    int    `json:"left"`
		Summary string `json:"summary,omitempty"`
	}
	jsonModel struct {
		jsonHead
		Provider string `json:"provider"`
		Model    string `json:"model"`
	}
	jsonStatus struct {
		jsonHead
		By   string `json:"by"`
		Key  string `json:"key"`
		Text string `json:"text"`
	}
	jsonError struct {
		jsonHead
		Message string `json:"message"`
	}
	jsonTurnEnd struct {
		jsonHead
		// Text is the final reply's text.
		Text       string `json:"text"`
		StopReason string `json:"stop_reason"`
		Error      string `json:"error,omitempty"`
	}
	jsonCommand struct {
		jsonHead
		Name   string `json:"name"`
		Output string `json:"output"`
	}
)

func (v *jsonView) write(line any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	_ = v.enc.Encode(line) // a reader gone away (EPIPE) is not panto's failure
}

// session writes the first line: which session this is.
func (v *jsonView) session(info host.Info) {
	ext := info.Extensions
	if ext == nil {
		ext = []string{}
	}
	v.write(jsonSession{head("session"), info.ID, info.Path, info.Resumed, info.Provider, info.Model, ext})
}

func (v *jsonView) show(ev host.Event) {
	h := head(ev.Kind())
	switch ev := ev.(type) {
	case host.TurnStart:
		v.write(jsonText{h, ev.Text})
	case host.TextDelta:
		v.write(jsonText{h, ev.Text})
	case host.ThinkingDelta:
		v.write(jsonText{h, ev.Text})
	case host.Reply:
		v.write(jsonReply{h, ev.Message, string(ev.StopReason)})
	case host.ToolStart:
		v.write(jsonToolStart{h, ev.ID, ev.Name, ev.Input})
	case host.ToolProgress:
		v.write(jsonToolProgress{h, ev.ID, ev.Name, ev.Text, ev.Elapsed.Milliseconds()})
	case host.ToolEnd:
		v.write(jsonToolEnd{h, ev.ID, ev.Name, ev.IsError, ev.Duration.Milliseconds(), ev.Lines, ev.Excerpt, ev.Result})
	case host.SystemChanged:
		v.write(jsonSystem{h, ev.By, string(ev.Mode), ev.Key, ev.Text, ev.Source})
	case host.SystemRefused:
		v.write(jsonRefused{h, ev.By, string(ev.Mode), ev.Key, ev.Text, errText(ev.Err)})
	case host.CompactionStart:
		v.write(jsonCompactionStart{h, ev.Auto, ev.Tokens})
	case host.CompactionDone:
		v.write(jsonCompactionDone{h, ev.Tokens, errText(ev.Err)})
	case host.Retry:
		v.write(jsonRetry{h, ev.Attempt, ev.Max, ev.Wait.Milliseconds(), ev.Reason})
	case host.Usage:
		u := jsonUsage{jsonHead: h, Model: ev.Model, InputTokens: ev.InputTokens, OutputTokens: ev.OutputTokens,
			CacheReadTokens: ev.CacheReadTokens, CacheWriteTokens: ev.CacheWriteTokens, ReasoningTokens: ev.ReasoningTokens}
		if ev.CostKnown {
			u.CostUSD = new(ev.CostUSD)
		}
		v.write(u)
	case host.Notice:
		v.write(jsonNotice{h, string(ev.Level), ev.Text, ev.By})
	case host.Moved:
		v.write(jsonMoved{h, ev.From, ev.To, ev.Left, ev.Summary})
	case host.ModelChanged:
		v.write(jsonModel{h, ev.Provider, ev.Model})
	case host.Status:
		v.write(jsonStatus{h, ev.By, ev.Key, ev.Text})
	case host.Error:
		v.write(jsonError{h, errText(ev.Err)})
	case host.TurnEnd:
		v.write(jsonTurnEnd{h, ev.Reply.Text(), string(ev.StopReason), errText(ev.Err)})
	}
}

func (v *jsonView) output(command, text string) {
	v.write(jsonCommand{head("command"), command, text})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
