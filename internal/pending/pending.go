// Package pending keeps, in the process, what a durable store must still
// write or remembers of its own failed statements (a final write record
// whose Finish failed, a resume claim whose Settle failed or whose Claim
// may have been applied before its answer was lost), so that the store
// writes it before it next reads what it concerns.
package pending

import "sync"

// Map is a map guarded by its own mutex. Its zero value is an empty map
// ready to use; it is safe for concurrent use and must not be copied.
type Map[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

// Put sets the value of k.
func (p *Map[K, V]) Put(k K, v V) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[K]V)
	}
	p.m[k] = v
}

// Get returns the value of k.
func (p *Map[K, V]) Get(k K) (V, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[k]
	return v, ok
}

// Delete removes k.
func (p *Map[K, V]) Delete(k K) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, k)
}

// DeleteIf removes k when its value satisfies same (the value that was
// written, not one put since).
func (p *Map[K, V]) DeleteIf(k K, same func(V) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.m[k]; ok && same(v) {
		delete(p.m, k)
	}
}

// Retry calls write for each entry, without holding the lock, and removes
// the entries it wrote (returned nil for); the others stay.
func (p *Map[K, V]) Retry(write func(K, V) error) {
	p.mu.Lock()
	if len(p.m) == 0 {
		p.mu.Unlock()
		return
	}
	type entry struct {
		k K
		v V
	}
	all := make([]entry, 0, len(p.m))
	for k, v := range p.m {
		all = append(all, entry{k, v})
	}
	p.mu.Unlock()
	for _, e := range all {
		if write(e.k, e.v) == nil {
			p.Delete(e.k)
		}
	}
}
