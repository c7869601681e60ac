package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/panto-dev/panto/sessionlog"
)

// Fork writes a new session log at dst that holds the path of the log
// src from its root to the entry ref names (an id or a unique prefix;
// "" is src's leaf): the same entries, ids and parents, so the prompt and
// the conversation at its leaf are exactly those at that entry. Its
// header names src's session and the entry (parent_session,
// parent_entry). Labels of the path's entries come along; entries off the
// path do not. src is only read (it may have a writer); dst must not
// exist. id is the new session's id ("" makes one: give the one dst's
// name carries, if it carries one). It returns the new log's header.
func Fork(src, ref, dst, id string) (sessionlog.Header, error) {
	fail := func(err error) (sessionlog.Header, error) {
		return sessionlog.Header{}, fmt.Errorf("fork %s: %w", src, err)
	}
	if _, err := os.Stat(dst); err == nil {
		return fail(fmt.Errorf("%s already exists", dst))
	} else if !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	h, err := sessionlog.ReadHeader(src)
	if err != nil {
		return fail(err)
	}
	tree, err := sessionlog.Scan(src)
	if err != nil {
		return fail(err)
	}
	at := tree.Leaf()
	if ref = strings.TrimSpace(ref); ref != "" {
		// Where a move may not go, a fork may not end: a reply whose
		// calls the fork would leave without their results.
		if at, err = CheckMove(tree, ref); err != nil {
			return fail(err)
		}
	}
	if at == "" {
		return fail(errors.New("the log has no entries to fork"))
	}
	chain, err := tree.Chain(at)
	if err != nil {
		return fail(err)
	}
	entries, err := tree.Entries(chain...)
	if err != nil {
		return fail(err)
	}
	on := make(map[string]bool, len(chain))
	for _, c := range chain {
		on[c] = true
	}
	// The path's label entries are left out (the entry after one follows
	// its parent instead): one may name an entry off the path, and one
	// that a label entry on another branch removed or replaced would come
	// back. The fork gets the labels in effect now, of the path's entries.
	dropped := map[string]string{} // a dropped entry's id: its parent
	kept := entries[:0]
	for _, e := range entries {
		p, ok := dropped[e.ParentID]
		for ok {
			e.ParentID = p
			p, ok = dropped[p]
		}
		if e.Label != nil || e.Raw != nil && e.ParentID != chainParent(e) {
			dropped[e.ID] = e.ParentID
			continue
		}
		kept = append(kept, e)
	}
	labels := tree.Labels()
	for _, c := range chain {
		if text, ok := labels[c]; ok {
			kept = append(kept, sessionlog.LabelEntry(c, text))
		}
	}
	w, err := sessionlog.Create(dst, sessionlog.Header{ID: id, Cwd: h.Cwd, ParentSession: h.ID, ParentEntry: at})
	if err != nil {
		return fail(err)
	}
	if _, err := w.Append(kept...); err != nil {
		w.Close()
		os.Remove(dst)
		return fail(fmt.Errorf("write %s: %w", dst, err))
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	return w.Header(), nil
}

// chainParent is the parent an entry's own line names: for an entry of a
// type this panto does not know, its Raw line is written as it is, so its
// parent cannot be changed.
func chainParent(e sessionlog.Entry) string {
	var head struct {
		ParentID string `json:"parent_id"`
	}
	if json.Unmarshal(e.Raw, &head) != nil {
		return ""
	}
	return head.ParentID
}
