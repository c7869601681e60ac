package host

import (
	"context"
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
// path do not. src is only read (it may have a writer); nothing may be
// at dst (not even a dangling symlink), and its directory must exist. id
// is the new session's id ("" makes one: give the one dst's name carries,
// if it carries one). It returns the new log's header.
//
// The log is written whole or not at all (sessionlog.WriteNew): until it
// is complete nothing is at dst, so a fork that fails, is cancelled or
// is killed never leaves a log that a later --continue would take up.
func Fork(src, ref, dst, id string) (sessionlog.Header, error) {
	return ForkContext(context.Background(), src, ref, dst, id)
}

// ForkContext is Fork, stopped by ctx: a cancelled fork removes its
// temporary file at once and writes nothing.
func ForkContext(ctx context.Context, src, ref, dst, id string) (sessionlog.Header, error) {
	fail := func(err error) (sessionlog.Header, error) {
		return sessionlog.Header{}, fmt.Errorf("fork %s: %w", src, err)
	}
	if _, err := os.Lstat(dst); err == nil {
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
	if err := context.Cause(ctx); err != nil {
		return fail(err)
	}
	out, err := sessionlog.WriteNew(ctx, dst, sessionlog.Header{ID: id, Cwd: h.Cwd, ParentSession: h.ID, ParentEntry: at}, kept)
	if errors.Is(err, sessionlog.ErrExists) {
		return fail(fmt.Errorf("%s already exists", dst))
	}
	if err != nil {
		return fail(err)
	}
	return out, nil
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
