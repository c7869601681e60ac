package sessionlog

// Name is the session's name: that of the latest session_info entry of
// the file (SessionInfo), or "" when it has none (or the latest removed
// it). Only that entry's line is decoded.
func (t *Tree) Name() (string, error) {
	last := int32(-1)
	for i, typ := range t.types {
		if typ == TypeSessionInfo && i > last {
			last = i
		}
	}
	if last < 0 {
		return "", nil
	}
	es, err := t.decode([]int32{last})
	if err != nil {
		return "", err
	}
	if es[0].SessionInfo == nil {
		return "", nil
	}
	return es[0].SessionInfo.Name, nil
}
