package runstore

import (
	"context"
	"sync"
)

// Claims records which snapshots have been taken for a resume, so that each
// snapshot is resumed at most once. Implementations must be safe for
// concurrent use, across processes where they are shared, and Claim must be
// atomic: of any number of concurrent claims of one id, exactly one
// succeeds. Run the conformance tests of package runstoretest against an
// implementation.
type Claims interface {
	// Claim takes snapshot id of run for one resume. It returns true when
	// the id was free and is now claimed, false when it was claimed before
	// and not released. A claim is kept until it is released; a store that
	// prunes claims (retention) must document it, and the loops that share
	// it must refuse snapshots older than that retention.
	Claim(ctx context.Context, run, id string) (bool, error)
	// Release frees the claim of id, so that the same snapshot can be
	// resumed again: the loop calls it only when the resume failed before
	// it changed anything. Releasing an id that is not claimed is a no-op.
	Release(ctx context.Context, run, id string) error
}

// MemoryClaims is the in-memory [Claims]. It is safe for concurrent use; its
// zero value is not usable, build it with [NewMemoryClaims]. Claims live as
// long as the process and are never pruned (about a hundred bytes a
// snapshot resumed), so only the process that holds them is protected: a
// service on several replicas, or one that restarts, uses a durable store.
type MemoryClaims struct {
	mu      sync.Mutex
	claimed map[claimKey]struct{}
}

type claimKey struct{ run, id string }

// NewMemoryClaims returns an empty in-memory claim store.
func NewMemoryClaims() *MemoryClaims {
	return &MemoryClaims{claimed: make(map[claimKey]struct{})}
}

var _ Claims = (*MemoryClaims)(nil)

// Claim implements [Claims.Claim].
func (m *MemoryClaims) Claim(_ context.Context, run, id string) (bool, error) {
	k := claimKey{run, id}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.claimed[k]; ok {
		return false, nil
	}
	m.claimed[k] = struct{}{}
	return true, nil
}

// Release implements [Claims.Release].
func (m *MemoryClaims) Release(_ context.Context, run, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.claimed, claimKey{run, id})
	return nil
}
