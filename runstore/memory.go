package runstore

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// Memory is the in-memory [Store]. It is safe for concurrent use; its zero
// value is not usable, build it with [NewMemory]. Runs live as long as the
// process. List sorts the selected runs, so it costs O(n log n) in the
// number of runs held: fine for tests and small services, not for an inbox
// of millions.
type Memory struct {
	mu   sync.RWMutex
	runs map[string]Run
}

// NewMemory returns an empty in-memory run store.
func NewMemory() *Memory {
	return &Memory{runs: make(map[string]Run)}
}

var _ Store = (*Memory)(nil)

// Save implements [Store.Save].
func (m *Memory) Save(_ context.Context, r Run) error {
	if err := Check(r); err != nil {
		return err
	}
	r.Args, r.Snapshot = bytes.Clone(r.Args), bytes.Clone(r.Snapshot)
	r.Stopped = micro(r.Stopped)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[r.ID] = r
	return nil
}

// Get implements [Store.Get]. The returned slices are copies.
func (m *Memory) Get(_ context.Context, id string) (Run, bool, error) {
	m.mu.RLock()
	r, ok := m.runs[id]
	m.mu.RUnlock()
	if !ok {
		return Run{}, false, nil
	}
	r.Args, r.Snapshot = bytes.Clone(r.Args), bytes.Clone(r.Snapshot)
	return r, true, nil
}

// List implements [Store.List].
func (m *Memory) List(_ context.Context, f Filter) (Page, error) {
	if err := f.Check(); err != nil {
		return Page{}, err
	}
	var after *Cursor
	if f.Cursor != "" {
		c, err := ParseCursor(f.Cursor)
		if err != nil {
			return Page{}, err
		}
		after = &c
	}
	f.StoppedBefore, f.StoppedAfter = micro(f.StoppedBefore), micro(f.StoppedAfter)
	m.mu.RLock()
	var sel []Run
	for _, r := range m.runs {
		if selects(f, after, r) {
			r.Args, r.Snapshot = bytes.Clone(r.Args), nil
			sel = append(sel, r)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(sel, func(a, b Run) int {
		return cmp.Or(a.Stopped.Compare(b.Stopped), cmp.Compare(a.ID, b.ID))
	})
	var p Page
	if n := f.PageSize(); len(sel) > n {
		sel = sel[:n]
		last := sel[n-1]
		p.Next = Cursor{Stopped: last.Stopped, ID: last.ID}.String()
	}
	p.Runs = sel
	return p, nil
}

// selects reports whether f (continuing after the cursor, if any) selects r.
func selects(f Filter, after *Cursor, r Run) bool {
	switch {
	case f.Kind != 0 && r.Kind != f.Kind,
		f.Node != "" && r.Node != f.Node,
		!f.StoppedBefore.IsZero() && !r.Stopped.Before(f.StoppedBefore),
		!f.StoppedAfter.IsZero() && r.Stopped.Before(f.StoppedAfter),
		after != nil && !after.After(r.Stopped, r.ID):
		return false
	}
	return true
}

// Delete implements [Store.Delete].
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, id)
	return nil
}

// Expire implements [Store.Expire].
func (m *Memory) Expire(_ context.Context, before time.Time) (int, error) {
	before = micro(before)
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, r := range m.runs {
		if r.Stopped.Before(before) {
			delete(m.runs, id)
			n++
		}
	}
	return n, nil
}

// micro returns t in UTC truncated to the microsecond, the precision of
// stop times in every store.
func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
