package sessionlog

import (
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/panto-dev/panto/conversation"
)

// Tree is the shape of a log: every entry's id, parent and type, in file
// order, with the effective labels, and where each entry's line is, so
// that entries can be decoded when asked for. It holds no message
// content: about 30 bytes an entry, whatever the size of the lines. Scan
// builds one from a file without decoding it, Load keeps the one it used,
// and Log.Tree builds one from a log in memory.
//
// A Tree is the log as it was read; entries appended later are not in it
// (Scan again to see them). It is safe for concurrent use. Every query
// takes time linear in the entries it visits, at most the whole log.
type Tree struct {
	path  string
	src   io.ReaderAt // the bytes entries are decoded from; nil with log
	log   *Log        // a Tree of a Log in memory decodes from it
	nodes nodeStore
	table idTable
	// other holds the ids that are not 16 lowercase hex characters (the
	// node's id is then an index in it), otherIndex the reverse.
	other      []string
	otherIndex map[string]int32
	// types holds the type of each entry of a type this version does not
	// know.
	types map[int32]EntryType
	// labels maps an entry to its effective label.
	labels map[int32]string
	// usage maps an assistant message to its usage, when the scan was
	// asked to keep them (the summary's).
	usage map[int32]Usage
	// skipped maps the id of each entry skipped for its place in the tree
	// to its line: no later entry may take its id.
	skipped map[string]int

	once       sync.Once
	childStart []int32 // the children of node i are children[childStart[i]:childStart[i+1]]
	children   []int32
	depth      []int32 // messages on the chain from the root to node i, itself included
}

// node is one entry of a Tree.
type node struct {
	// id is the entry id as 64 bits when it is 16 lowercase hex
	// characters (as panto writes them); with flagOtherID, an index in
	// Tree.other.
	id uint64
	// pos is the line's offset in the file, and the kind and flags in the
	// top 16 bits.
	pos uint64
	// parent is the parent's node, -1 for the root.
	parent int32
	// size is the line's length, without its newline.
	size uint32
}

const (
	posBits  = 48
	posMask  = 1<<posBits - 1
	kindBits = 8
)

func (n *node) off() int64    { return int64(n.pos & posMask) }
func (n *node) kind() kind    { return kind(n.pos >> posBits & (1<<kindBits - 1)) }
func (n *node) flags() uint8  { return uint8(n.pos >> (posBits + kindBits)) }
func (n *node) role() role    { return role(n.flags() & roleMask) }
func (n *node) message() bool { return n.kind() == kindMessage }

// system reports whether n is a system message, or a message whose role
// the scan could not tell (decoding it tells).
func (n *node) system() bool {
	return n.kind() == kindMessage && (n.role() == roleSystem || n.role() == roleUnknown)
}

func makePos(off int64, k kind, flags uint8) uint64 {
	return uint64(off) | uint64(k)<<posBits | uint64(flags)<<(posBits+kindBits)
}

// kind is an entry type as a small number.
type kind uint8

const (
	kindOther kind = iota // a type this version does not know (Tree.types)
	kindMessage
	kindLifecycle
	kindExtensionData
	kindModelChange
	kindCompaction
	kindMove
	kindLabel
	kindBranchSummary
	kindPermissions
)

var kindTypes = [...]EntryType{"", TypeMessage, TypeLifecycle, TypeExtensionData, TypeModelChange,
	TypeCompaction, TypeMove, TypeLabel, TypeBranchSummary, TypePermissions}

func kindOf(t EntryType) kind {
	switch t {
	case TypeMessage:
		return kindMessage
	case TypeLifecycle:
		return kindLifecycle
	case TypeExtensionData:
		return kindExtensionData
	case TypeModelChange:
		return kindModelChange
	case TypeCompaction:
		return kindCompaction
	case TypeMove:
		return kindMove
	case TypeLabel:
		return kindLabel
	case TypeBranchSummary:
		return kindBranchSummary
	case TypePermissions:
		return kindPermissions
	}
	return kindOther
}

// role is a message's role as a small number, in the low bits of a node's
// flags.
type role uint8

const (
	roleUnknown role = iota // not a message, or the scan could not tell
	roleSystem
	roleUser
	roleAssistant
	roleTool
	roleOther // a role this version does not know (an error once decoded)
	roleMask  = 7
	// flagOtherID marks a node whose id is in Tree.other.
	flagOtherID = 8
)

func roleOf(r string) role {
	switch conversation.Role(r) {
	case conversation.RoleSystem:
		return roleSystem
	case conversation.RoleUser:
		return roleUser
	case conversation.RoleAssistant:
		return roleAssistant
	case conversation.RoleTool:
		return roleTool
	}
	return roleOther
}

var roleNames = [...]conversation.Role{"", conversation.RoleSystem, conversation.RoleUser,
	conversation.RoleAssistant, conversation.RoleTool, ""}

// nodeStore holds nodes in fixed blocks, so that it grows without copying
// (and without a moment holding the old and the new array).
type nodeStore struct {
	blocks []*[nodeBlock]node
	n      int32
}

const (
	nodeBlockBits = 14
	nodeBlock     = 1 << nodeBlockBits
)

func (s *nodeStore) at(i int32) *node { return &s.blocks[i>>nodeBlockBits][i&(nodeBlock-1)] }

func (s *nodeStore) add(n node) int32 {
	if int(s.n) == len(s.blocks)*nodeBlock {
		s.blocks = append(s.blocks, new([nodeBlock]node))
	}
	i := s.n
	*s.at(i) = n
	s.n++
	return i
}

// idTable finds a node by its 64-bit id: open addressing, linear probing.
// A slot holds a node index plus one (0 is empty) in its low 28 bits and
// 4 bits of the id's hash above them, so that most probes of other ids
// are told apart without reading their node. It stores no ids: a probe
// whose bits match compares with the node's.
type idTable struct {
	slots []uint32
	shift uint8 // 64 - log2(len(slots))
	n     int
}

const (
	slotIndexBits = 28
	slotIndexMask = 1<<slotIndexBits - 1
	// maxNodes is how many entries a Tree can hold: far more than any
	// session (a log of this many entries would be over 100 GB).
	maxNodes = slotIndexMask - 1
)

func hashID(id uint64) uint64 { return id * 0x9e3779b97f4a7c15 }

// fingerprint returns the bits of the hash a slot keeps: low ones, which
// the slot's position (the high bits) does not tell.
func fingerprint(h uint64) uint32 { return uint32(h&0xf) << slotIndexBits }

// probe looks id up. It returns the node when it is there; otherwise the
// empty slot where it goes, for put (valid until the table changes).
func (t *idTable) probe(nodes *nodeStore, id uint64) (node int32, found bool, slot uint64) {
	if len(t.slots) == 0 {
		return 0, false, 0
	}
	h := hashID(id)
	fp := fingerprint(h)
	mask := uint64(len(t.slots) - 1)
	for i := h >> t.shift; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return 0, false, i
		}
		if s&^slotIndexMask == fp {
			if k := int32(s&slotIndexMask) - 1; nodes.at(k).id == id {
				return k, true, i
			}
		}
	}
}

func (t *idTable) find(nodes *nodeStore, id uint64) (int32, bool) {
	k, ok, _ := t.probe(nodes, id)
	return k, ok
}

// room makes sure one more id fits without growing, so that a slot probe
// returned stays valid for put.
func (t *idTable) room(nodes *nodeStore) {
	if (t.n+1)*10 > len(t.slots)*7 {
		t.grow(nodes, max(1<<12, 2*len(t.slots)))
	}
}

// put records node k, whose id probe did not find, at the slot it gave.
func (t *idTable) put(slot uint64, id uint64, k int32) {
	t.slots[slot] = fingerprint(hashID(id)) | uint32(k+1)
	t.n++
}

// insert adds node k with the given id, which must not be in the table.
func (t *idTable) insert(nodes *nodeStore, id uint64, k int32) {
	t.room(nodes)
	_, _, slot := t.probe(nodes, id)
	t.put(slot, id, k)
}

// reserve makes room for n ids without growing.
func (t *idTable) reserve(nodes *nodeStore, n int) {
	want := 1 << 12
	for want*7 < n*10 {
		want *= 2
	}
	if want > len(t.slots) {
		t.grow(nodes, want)
	}
}

func (t *idTable) grow(nodes *nodeStore, size int) {
	old := t.slots
	t.slots = make([]uint32, size)
	t.shift = uint8(64 - bitsLen(size))
	mask := uint64(size - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := hashID(nodes.at(int32(s&slotIndexMask)-1).id) >> t.shift
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// bitsLen returns log2 of the power of two n.
func bitsLen(n int) int {
	b := 0
	for n > 1 {
		n >>= 1
		b++
	}
	return b
}

// hexVal maps a lowercase hex digit to its value, anything else to 0xff.
var hexVal = func() (t [256]uint8) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = uint8(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = uint8(c - 'a' + 10)
	}
	return t
}()

// packID returns the 64 bits of an id of 16 lowercase hex characters.
func packID[S string | []byte](s S) (uint64, bool) {
	if len(s) != 16 {
		return 0, false
	}
	var v uint64
	for i := range 16 {
		d := hexVal[s[i]]
		if d == 0xff {
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

func unpackID(v uint64) string {
	var b [8]byte
	for i := range b {
		b[i] = byte(v >> (56 - 8*i))
	}
	return hex.EncodeToString(b[:])
}

// newTree returns an empty tree of the log at path.
func newTree(path string) *Tree {
	return &Tree{path: path}
}

// add appends a node for the entry id of kind k (typ when kindOther)
// with the given parent node, and indexes its id. The caller has checked
// that id is not in the tree; slot is where a probe of the table put a
// packed id (-1: look for it).
func (t *Tree) add(id string, packed uint64, isHex bool, slot int64, k kind, typ EntryType, r role, parent int32, off int64, size uint32) int32 {
	flags := uint8(r)
	if !isHex {
		flags |= flagOtherID
		packed = uint64(len(t.other))
		t.other = append(t.other, id)
	}
	i := t.nodes.add(node{id: packed, pos: makePos(off, k, flags), parent: parent, size: size})
	if isHex && slot >= 0 {
		t.table.put(uint64(slot), packed, i)
	} else if isHex {
		t.table.insert(&t.nodes, packed, i)
	} else {
		if t.otherIndex == nil {
			t.otherIndex = map[string]int32{}
		}
		t.otherIndex[id] = i
	}
	if k == kindOther {
		if t.types == nil {
			t.types = map[int32]EntryType{}
		}
		t.types[i] = typ
	}
	return i
}

// find returns the node of the entry id.
func (t *Tree) find(id string) (int32, bool) {
	if v, ok := packID(id); ok {
		return t.table.find(&t.nodes, v)
	}
	i, ok := t.otherIndex[id]
	return i, ok
}

// has and taken make a Tree the id set of its log's Writer.
func (t *Tree) has(id string) bool {
	_, ok := t.find(id)
	return ok
}

func (t *Tree) taken(id string) bool {
	_, ok := t.skipped[id]
	return ok || t.has(id)
}

// idOf returns the id of node i.
func (t *Tree) idOf(i int32) string {
	n := t.nodes.at(i)
	if n.flags()&flagOtherID != 0 {
		return t.other[n.id]
	}
	return unpackID(n.id)
}

func (t *Tree) typeOf(i int32) EntryType {
	if k := t.nodes.at(i).kind(); k != kindOther {
		return kindTypes[k]
	}
	return t.types[i]
}

// setLabel records a label entry's effect on node target.
func (t *Tree) setLabel(target int32, text string) {
	if text == "" {
		delete(t.labels, target)
		return
	}
	if t.labels == nil {
		t.labels = map[int32]string{}
	}
	t.labels[target] = text
}

// noEntry is the error for an id that names no entry.
func (t *Tree) noEntry(id string) error {
	return fmt.Errorf("session log %s: no entry %q", t.path, id)
}

// node returns the node of id, or an error naming the log.
func (t *Tree) node(id string) (int32, error) {
	i, ok := t.find(id)
	if !ok {
		return 0, t.noEntry(id)
	}
	return i, nil
}

// Len returns the number of entries.
func (t *Tree) Len() int { return int(t.nodes.n) }

// Leaf returns the id of the current leaf, the last entry, or "" when the
// log has none.
func (t *Tree) Leaf() string {
	if t.nodes.n == 0 {
		return ""
	}
	return t.idOf(t.nodes.n - 1)
}

// Node is one entry as the tree sees it.
type Node struct {
	ID string
	// ParentID is "" for the root.
	ParentID string
	Type     EntryType
	// Role is a message's role; "" for other entries (and for a message
	// whose line the scan could not read it from: decode it to know).
	Role conversation.Role
	// Label is the entry's effective label, or "".
	Label string
	// Messages is the number of messages on the chain from the root to
	// this entry, itself included: a message is message number Messages
	// of its branch.
	Messages int
	// Children is the number of entries whose parent this is.
	Children int
}

// Node returns what the tree knows of the entry id.
func (t *Tree) Node(id string) (Node, error) {
	i, err := t.node(id)
	if err != nil {
		return Node{}, err
	}
	t.build()
	n := t.nodes.at(i)
	out := Node{ID: id, Type: t.typeOf(i), Label: t.labels[i], Messages: int(t.depth[i]),
		Children: int(t.childStart[i+1] - t.childStart[i])}
	if n.parent >= 0 {
		out.ParentID = t.idOf(n.parent)
	}
	if n.message() {
		out.Role = roleNames[n.role()]
	}
	return out, nil
}

// build computes, once, the children and the message depth of every node.
func (t *Tree) build() {
	t.once.Do(func() {
		n := t.nodes.n
		t.childStart = make([]int32, n+1)
		t.depth = make([]int32, n)
		for i := range n {
			nd := t.nodes.at(i)
			d := int32(0)
			if nd.parent >= 0 {
				t.childStart[nd.parent+1]++
				d = t.depth[nd.parent]
			}
			if nd.message() {
				d++
			}
			t.depth[i] = d
		}
		for i := range n {
			t.childStart[i+1] += t.childStart[i]
		}
		t.children = make([]int32, max(0, int(n)-1))
		fill := slices.Clone(t.childStart[:n])
		for i := range n { // in file order: each list comes out in file order
			if p := t.nodes.at(i).parent; p >= 0 {
				t.children[fill[p]] = i
				fill[p]++
			}
		}
	})
}

// Children returns the ids of the entries whose parent is id, in file
// order.
func (t *Tree) Children(id string) ([]string, error) {
	i, err := t.node(id)
	if err != nil {
		return nil, err
	}
	t.build()
	kids := t.children[t.childStart[i]:t.childStart[i+1]]
	out := make([]string, len(kids))
	for k, c := range kids {
		out[k] = t.idOf(c)
	}
	return out, nil
}

// Chain returns the ids of the entries on the chain from the root to the
// entry id, in root-to-leaf order: the path to id. (Log.Branch gives the
// entries themselves.)
func (t *Tree) Chain(id string) ([]string, error) {
	i, err := t.node(id)
	if err != nil {
		return nil, err
	}
	chain := t.chain(i)
	out := make([]string, len(chain))
	for k, c := range chain {
		out[k] = t.idOf(c)
	}
	return out, nil
}

// chain returns the nodes from the root to node i. Parents are earlier
// nodes, so it is increasing.
func (t *Tree) chain(i int32) []int32 {
	n := 0
	for j := i; j >= 0; j = t.nodes.at(j).parent {
		n++
	}
	out := make([]int32, n)
	for j := i; j >= 0; j = t.nodes.at(j).parent {
		n--
		out[n] = j
	}
	return out
}

// Labels returns the effective labels: each labelled entry's id and its
// label. The latest label entry of an entry wins; an empty one removes
// its label.
func (t *Tree) Labels() map[string]string {
	out := make(map[string]string, len(t.labels))
	for i, text := range t.labels {
		out[t.idOf(i)] = text
	}
	return out
}

// Branches returns the branches of the tree, each as the id of its last
// message, in file order: the messages no other message follows (through
// entries of other types). So a move or a label starts no branch, and a
// log without messages has none. Node(id).Messages is a branch's length.
func (t *Tree) Branches() []string {
	var out []string
	for _, i := range t.branchEnds() {
		out = append(out, t.idOf(i))
	}
	return out
}

// branchEnds returns the nodes Branches names.
func (t *Tree) branchEnds() []int32 {
	n := t.nodes.n
	// near[i] is the nearest message at or above node i, -1 for none.
	near := make([]int32, n)
	followed := make([]bool, n)
	for i := range n {
		nd := t.nodes.at(i)
		up := int32(-1)
		if nd.parent >= 0 {
			up = near[nd.parent]
		}
		if nd.message() {
			if up >= 0 {
				followed[up] = true
			}
			up = i
		}
		near[i] = up
	}
	var out []int32
	for i := range n {
		if t.nodes.at(i).message() && !followed[i] {
			out = append(out, i)
		}
	}
	return out
}

// Resolve returns the id of the entry ref names: its id, or a prefix of
// exactly one entry's id. An ambiguous prefix is an error that lists some
// of the entries it starts; so is a ref that starts none.
func (t *Tree) Resolve(ref string) (string, error) {
	if ref == "" {
		return "", fmt.Errorf("session log %s: no entry id given", t.path)
	}
	if _, ok := t.find(ref); ok {
		return ref, nil
	}
	const shown = 5
	var matches []string
	count := 0
	match := func(i int32) {
		count++
		if len(matches) < shown {
			matches = append(matches, t.idOf(i))
		}
	}
	// A prefix of hex digits compares as the top bits of a packed id.
	var want, mask uint64
	hexRef := len(ref) < 16
	for k := 0; k < len(ref) && hexRef; k++ {
		d := hexVal[ref[k]]
		hexRef = d != 0xff
		want |= uint64(d) << (60 - 4*k)
	}
	if hexRef {
		mask = ^uint64(0) << (64 - 4*len(ref))
	}
	for i := range t.nodes.n {
		n := t.nodes.at(i)
		if n.flags()&flagOtherID != 0 {
			if strings.HasPrefix(t.other[n.id], ref) {
				match(i)
			}
		} else if hexRef && n.id&mask == want&mask {
			match(i)
		}
	}
	switch {
	case count == 1:
		return matches[0], nil
	case count == 0:
		return "", fmt.Errorf("session log %s: no entry %q (and no entry id starts with it)", t.path, ref)
	}
	more := ""
	if count > len(matches) {
		more = fmt.Sprintf(", and %d more", count-len(matches))
	}
	return "", fmt.Errorf("session log %s: %q is ambiguous: it starts %d entry ids (%s%s); give more of the id",
		t.path, ref, count, strings.Join(matches, ", "), more)
}

// NthMessage returns the id of message number n (from 1) of the current
// branch, counting every message, system ones included: the point the
// conversation's first n messages end at.
func (t *Tree) NthMessage(n int) (string, error) {
	if t.nodes.n == 0 || n < 1 {
		return "", fmt.Errorf("session log %s: no message %d", t.path, n)
	}
	seen := 0
	for _, i := range t.chain(t.nodes.n - 1) {
		if t.nodes.at(i).message() {
			if seen++; seen == n {
				return t.idOf(i), nil
			}
		}
	}
	return "", fmt.Errorf("session log %s: no message %d: the current branch has %d messages", t.path, n, seen)
}
