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
	r.Snapshot = bytes.Clone(r.Snapshot)
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
	r.Snapshot = bytes.Clone(r.Snapshot)
	return r, true, nil
}

// List implements [Store.List].
func (m *Memory) List(_ context.Context, f Filter) (Page, error) {
	if err := f.Check(); err != nil {
		return Page{}, err
	}
	after, cont, _ := f.After() // checked above
	m.mu.RLock()
	var sel []Run
	for _, r := range m.runs {
		if f.Selects(r) && (!cont || after.After(r.Stopped, r.ID)) {
			if f.Snapshots {
				r.Snapshot = bytes.Clone(r.Snapshot)
			} else {
				r.Snapshot = nil
			}
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
		p.Next = f.Next(sel[n-1])
	}
	p.Runs = sel
	return p, nil
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
