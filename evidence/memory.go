package evidence

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/reactguard/reactguard/internal/grow"
	"github.com/reactguard/reactguard/internal/printkey"
	"github.com/reactguard/reactguard/outcome"
)

// Memory is the in-memory [Ledger] and [Exporter]. The zero value is not
// usable; build one with [NewMemory]. It is safe for concurrent use: runs are
// independent, and each run has its own lock, so calls on different runs do
// not contend.
//
// Memory indexes records so that every lookup is a hash-map access
// whatever the number of records: the successful tools and the calls by
// call id and by fingerprint when a record is appended; each scalar leaf of
// a SUCCESS payload under (tool, dotted path, text), and its text and
// [Words] alone, at the first [Memory.HasValue] after the append (each
// record is walked once, and a run nobody asks values of never pays for
// it). FAILED payloads are kept but not indexed: a failure is no evidence
// of a value.
// The context arguments are unused; Memory never blocks on anything but its
// locks.
//
// State lives until [Memory.Forget]; a long-running service forgets a run
// when the run is over.
type Memory struct {
	mu   sync.RWMutex
	runs map[string]*memRun
	// hint is the number of calls of the last run forgotten: a new run's
	// call and fingerprint indexes are made that large at its first record,
	// so that a service whose runs are alike does not grow them step by
	// step (each step re-hashes every key); its records start with room
	// for that many up to startRecords and, past it, grow to that many at
	// once (grow.AppendHint). At most maxHint.
	hint atomic.Int64
}

// maxHint bounds the size hint of a new run's indexes, and so what a short
// run that follows a long one allocates for nothing. A new run's records
// start with room for the hint's records up to startRecords, and grow to
// the hint at once when they pass it (grow.AppendHint).
const (
	maxHint      = 4096
	startRecords = 256
)

// NewMemory returns an empty in-memory ledger.
func NewMemory() *Memory {
	return &Memory{runs: make(map[string]*memRun)}
}

var (
	_ Ledger   = (*Memory)(nil)
	_ Exporter = (*Memory)(nil)
)

type valueKey struct {
	tool, path, text string
}

// callIndex is what the run knows of one call id. It is stored by value:
// indexing a record allocates nothing per call.
type callIndex struct {
	latest, latestSuccess int // indexes into records; -1 when none
	// attempts has bit a-1 set for each attempt a in 1..64 recorded;
	// other attempt numbers go to moreAttempts, nil until needed.
	attempts     uint64
	moreAttempts map[int]struct{}
}

// has reports whether attempt a of the call is recorded.
func (ci *callIndex) has(a int) bool {
	if a >= 1 && a <= 64 {
		return ci.attempts&(1<<(a-1)) != 0
	}
	_, ok := ci.moreAttempts[a]
	return ok
}

// note records attempt a of the call.
func (ci *callIndex) note(a int) {
	if a >= 1 && a <= 64 {
		ci.attempts |= 1 << (a - 1)
		return
	}
	if ci.moreAttempts == nil {
		ci.moreAttempts = make(map[int]struct{})
	}
	ci.moreAttempts[a] = struct{}{}
}

// printIndex is what the run knows of one fingerprint, stored by value and
// without pointers, so that the map of a run's fingerprints (keyed by
// printkey.Key) is not scanned by the garbage collector. Most fingerprints
// are executed by one call id; further distinct ones are counted in more
// and kept in the run's more set, made when the first comes.
type printIndex struct {
	first int32 // index into records of the first record (its call id is the first)
	last  int32 // index into records of the latest record
	more  int32 // further distinct call ids
}

// calls returns how many distinct call ids executed the fingerprint.
func (pi *printIndex) calls() int { return 1 + int(pi.more) }

// printCall is a further call id of a fingerprint (printIndex.more).
type printCall struct{ fingerprint, callID string }

type memRun struct {
	mu       sync.RWMutex
	records  []Record
	calls    map[string]callIndex
	tools    map[string]struct{}
	values   map[valueKey]struct{}
	anyValue map[string]struct{}
	prints   map[printkey.Key]printIndex // fingerprints of fingerprint.Of's form (package printkey)
	others   map[string]printIndex       // other fingerprints; nil until one comes
	more     map[printCall]struct{}      // see printIndex; nil until one comes
	valued   int                         // records[:valued] have their values indexed
	user     []string                    // as said
	folded   []string                    // case-folded, for UserSaid
	hint     int                         // the size to make calls and prints at (Memory.hint)
}

// newRun returns an empty run. Its maps are made when first written, so
// a run that holds only the user's words (or a few records) costs little.
func newRun(hint int) *memRun { return &memRun{hint: hint} }

// run returns the state of id, creating it when create is set; nil when it
// does not exist and create is not set.
func (m *Memory) run(id string, create bool) *memRun {
	m.mu.RLock()
	r := m.runs[id]
	m.mu.RUnlock()
	if r != nil || !create {
		return r
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r = m.runs[id]; r == nil {
		r = newRun(int(m.hint.Load()))
		m.runs[id] = r
	}
	return r
}

// indexValues indexes the values of the records appended since the last
// call, so that HasValue answers with one hash-map access. Callers hold
// st.mu for writing. Values are indexed on the first lookup after an
// append rather than at every append: a run whose values nobody asks for
// (no parameter declares a source) never pays for walking its results.
func (st *memRun) indexValues() {
	if st.values == nil && st.valued < len(st.records) {
		st.values = make(map[valueKey]struct{})
		st.anyValue = make(map[string]struct{})
	}
	for ; st.valued < len(st.records); st.valued++ {
		r := st.records[st.valued]
		if r.Outcome != outcome.Success || len(r.Payload) == 0 {
			continue
		}
		_ = walkValid(r.Payload, func(path, text string) bool { // Check validated the payload
			st.values[valueKey{r.Tool, path, text}] = struct{}{}
			st.anyValue[text] = struct{}{}
			for _, w := range Words(text) {
				st.anyValue[w] = struct{}{}
			}
			return true
		})
	}
}

// Append implements [Ledger.Append]. The payload is copied; its values are
// indexed by the first value lookup that follows.
func (m *Memory) Append(_ context.Context, run string, r Record) error {
	if err := Check(r); err != nil {
		return err
	}
	if r.Payload != nil {
		r.Payload = slices.Clone(r.Payload)
	}
	r.Provenance = r.Provenance.Clean()
	st := m.run(run, true)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.add(r)
	return nil
}

// add appends r unless its (call, attempt) is known. Callers hold st.mu.
func (st *memRun) add(r Record) {
	if st.calls == nil {
		st.calls = make(map[string]callIndex, st.hint)
		st.tools = make(map[string]struct{})
		st.prints = make(map[printkey.Key]printIndex, st.hint)
		st.records = make([]Record, 0, min(st.hint, startRecords))
	}
	ci, known := st.calls[r.CallID]
	if !known {
		ci = callIndex{latest: -1, latestSuccess: -1}
	}
	if ci.has(r.Attempt) {
		return
	}
	ci.note(r.Attempt)
	i := len(st.records)
	st.records = grow.AppendHint(st.records, r, st.hint)

	ci.latest = i
	if r.Outcome == outcome.Success {
		ci.latestSuccess = i
		if _, ok := st.tools[r.Tool]; !ok { // most records are of a tool seen before
			st.tools[r.Tool] = struct{}{}
		}
	}
	st.calls[r.CallID] = ci
	if r.Fingerprint != "" {
		st.addPrint(r, int32(i))
	}
}

// addPrint indexes record i, r, under its fingerprint. Callers hold st.mu.
func (st *memRun) addPrint(r Record, i int32) {
	k, canonical := printkey.Parse(r.Fingerprint)
	var pi printIndex
	var known bool
	if canonical {
		pi, known = st.prints[k]
	} else {
		pi, known = st.others[r.Fingerprint]
	}
	switch {
	case !known:
		pi.first = i
	case st.records[pi.first].CallID != r.CallID:
		pc := printCall{r.Fingerprint, r.CallID}
		if _, seen := st.more[pc]; !seen {
			if st.more == nil {
				st.more = make(map[printCall]struct{})
			}
			st.more[pc] = struct{}{}
			pi.more++
		}
	}
	pi.last = i
	if canonical {
		st.prints[k] = pi
		return
	}
	if st.others == nil {
		st.others = make(map[string]printIndex)
	}
	st.others[r.Fingerprint] = pi
}

// print returns the index of fingerprint fp. Callers hold st.mu.
func (st *memRun) print(fp string) (printIndex, bool) {
	if k, ok := printkey.Parse(fp); ok {
		pi, ok := st.prints[k]
		return pi, ok
	}
	pi, ok := st.others[fp]
	return pi, ok
}

// Records implements [Ledger.Records]. The returned slice is a copy; the
// payload bytes are shared and must not be modified.
func (m *Memory) Records(_ context.Context, run string) ([]Record, error) {
	st := m.run(run, false)
	if st == nil {
		return nil, nil
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	return slices.Clone(st.records), nil
}

// Lookup implements [Ledger.Lookup].
func (m *Memory) Lookup(_ context.Context, run, callID string) (Record, bool, error) {
	st := m.run(run, false)
	if st == nil {
		return Record{}, false, nil
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	ci, ok := st.calls[callID]
	if !ok {
		return Record{}, false, nil
	}
	if ci.latestSuccess >= 0 {
		return st.records[ci.latestSuccess], true, nil
	}
	return st.records[ci.latest], true, nil
}

// HasResult implements [Ledger.HasResult].
func (m *Memory) HasResult(_ context.Context, run, tool string) (bool, error) {
	st := m.run(run, false)
	if st == nil {
		return false, nil
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	_, ok := st.tools[tool]
	return ok, nil
}

// HasValue implements [Ledger.HasValue] with one hash-map access, after
// indexing the values of the records appended since the last lookup.
func (m *Memory) HasValue(_ context.Context, run, tool, field, value string) (bool, error) {
	st := m.run(run, false)
	if st == nil {
		return false, nil
	}
	st.mu.RLock()
	if st.valued < len(st.records) {
		st.mu.RUnlock()
		st.mu.Lock()
		st.indexValues()
		st.mu.Unlock()
		st.mu.RLock()
	}
	defer st.mu.RUnlock()
	var ok bool
	if tool == "" {
		_, ok = st.anyValue[value]
	} else {
		_, ok = st.values[valueKey{tool, field, value}]
	}
	return ok, nil
}

// Executions implements [Ledger.Executions].
func (m *Memory) Executions(_ context.Context, run, fingerprint string) (int, Record, error) {
	st := m.run(run, false)
	if st == nil || fingerprint == "" {
		return 0, Record{}, nil
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	pi, ok := st.print(fingerprint)
	if !ok {
		return 0, Record{}, nil
	}
	return pi.calls(), st.records[pi.last], nil
}

// AddUserText implements [Ledger.AddUserText]. Empty texts are ignored.
func (m *Memory) AddUserText(_ context.Context, run, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	st := m.run(run, true)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.user = append(st.user, text)
	st.folded = append(st.folded, strings.ToLower(text))
	return nil
}

// UserSaid implements [Ledger.UserSaid] by a substring search of the user's
// texts, so its cost grows with what the user said, never with the records:
// value, trimmed of surrounding space, must occur in one text, ignoring
// case, and must not be part of a longer word: where value begins (ends)
// with a letter or digit, the character before (after) the occurrence must
// not be one. So "42" is said in "site 42, please" but not in "site 421",
// and "北京" is said in "删除北京的站点".
func (m *Memory) UserSaid(_ context.Context, run, value string) (bool, error) {
	value = strings.ToLower(strings.TrimSpace(value))
	if value == "" {
		return false, nil
	}
	st := m.run(run, false)
	if st == nil {
		return false, nil
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	for _, t := range st.folded {
		if containsWord(t, value) {
			return true, nil
		}
	}
	return false, nil
}

// Said reports whether value appears in text by the rule of
// [Memory.UserSaid]: value, trimmed of surrounding space, occurs in text,
// ignoring case, and is not part of a longer word. An empty value is never
// said. Ledgers kept in a database use it to answer [Ledger.UserSaid] the
// same way as Memory, over the user's texts of the run.
func Said(text, value string) bool {
	value = strings.ToLower(strings.TrimSpace(value))
	if value == "" {
		return false
	}
	return containsWord(strings.ToLower(text), value)
}

// containsWord reports whether v occurs in t at word boundaries (see
// UserSaid).
func containsWord(t, v string) bool {
	first, _ := utf8.DecodeRuneInString(v)
	last, _ := utf8.DecodeLastRuneInString(v)
	checkBefore, checkAfter := isWordRune(first), isWordRune(last)
	for off := 0; off <= len(t)-len(v); {
		i := strings.Index(t[off:], v)
		if i < 0 {
			return false
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(t[:i])
		after, _ := utf8.DecodeRuneInString(t[i+len(v):])
		if (!checkBefore || i == 0 || !isWordRune(before)) &&
			(!checkAfter || i+len(v) == len(t) || !isWordRune(after)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(t[i:])
		off = i + size
	}
	return false
}

// isWordRune reports whether r is an ASCII-like word character: a letter
// or digit of a script that separates words with spaces. Ideographs and
// kana are not, since those scripts do not separate words.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
		return false
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Export implements [Exporter.Export].
func (m *Memory) Export(_ context.Context, run string) (Snapshot, error) {
	st := m.run(run, false)
	if st == nil {
		return Snapshot{}, nil
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	s := Snapshot{Records: make([]Record, len(st.records)), UserTexts: slices.Clone(st.user)}
	for i, r := range st.records {
		if r.Payload != nil {
			r.Payload = slices.Clone(r.Payload)
		}
		s.Records[i] = r
	}
	return s, nil
}

// Import implements [Exporter.Import]: records whose (call id, attempt)
// the run already holds are kept as they are, the others are appended and
// indexed in order with the same rules as [Memory.Append]; a user text is
// added unless the run already holds it as often as s does.
func (m *Memory) Import(_ context.Context, run string, s Snapshot) error {
	recs := make([]Record, len(s.Records))
	for i, r := range s.Records {
		if err := Check(r); err != nil {
			return err
		}
		if r.Payload != nil {
			r.Payload = slices.Clone(r.Payload)
		}
		r.Provenance = r.Provenance.Clean()
		recs[i] = r
	}
	st := m.run(run, true)
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, r := range recs {
		st.add(r)
	}
	held := make(map[string]int, len(st.user))
	for _, t := range st.user {
		held[t]++
	}
	for _, t := range s.UserTexts {
		if strings.TrimSpace(t) == "" {
			continue
		}
		if held[t] > 0 {
			held[t]--
			continue
		}
		st.user = append(st.user, t)
		st.folded = append(st.folded, strings.ToLower(t))
	}
	return nil
}

// Forget drops everything recorded for run. Lookups on it then read as
// empty.
func (m *Memory) Forget(run string) {
	m.mu.Lock()
	st := m.runs[run]
	delete(m.runs, run)
	m.mu.Unlock()
	if st != nil {
		st.mu.RLock()
		m.hint.Store(int64(min(len(st.calls), maxHint)))
		st.mu.RUnlock()
	}
}
