package postgres

import "sync"

// memo is a bounded map of what a Store remembers of its own recent
// statements, to choose a cheaper statement next time: never the truth,
// which the database holds, only a hint that a statement checks again.
// It is emptied at once when it holds maxMemo entries (each forgotten
// entry costs one fuller statement). It is safe for concurrent use; the
// zero value is ready.
type memo[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

// maxMemo bounds each memo of a Store.
const maxMemo = 4096

// put remembers v for k.
func (m *memo[V]) put(k string, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxMemo {
		m.m = make(map[string]V)
	}
	m.m[k] = v
}

// get returns what is remembered for k.
func (m *memo[V]) get(k string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[k]
	return v, ok
}

// take returns what is remembered for k and forgets it.
func (m *memo[V]) take(k string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[k]
	delete(m.m, k)
	return v, ok
}

// del forgets k.
func (m *memo[V]) del(k string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, k)
}

// clear forgets everything.
func (m *memo[V]) clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m = nil
}
