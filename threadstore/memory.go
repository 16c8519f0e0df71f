package threadstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/runstore"
)

// Memory is the in-memory [Store]. It is safe for concurrent use; its zero
// value is not usable, build it with [NewMemory]. Threads live as long as
// the process. Every lease is held in this process, so a lease is never
// taken over: a run that holds a thread gives it up when its Run or
// Resume returns, panics included (package react does). Its evidence is
// an [evidence.Memory] keyed by thread id.
type Memory struct {
	mu      sync.Mutex
	threads map[string]*memThread
	ev      *evidence.Memory
	now     func() time.Time
}

type memThread struct {
	Thread
	token string
	turns []Turn
}

// NewMemory returns an empty in-memory thread store.
func NewMemory() *Memory {
	return &Memory{threads: make(map[string]*memThread), ev: evidence.NewMemory(), now: time.Now}
}

var _ Store = (*Memory)(nil)

// NewToken returns a random lease token.
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// Acquire implements [Store.Acquire].
func (m *Memory) Acquire(_ context.Context, id string, owner runstore.Owner, run string) (Thread, string, error) {
	if err := CheckAcquire(id, owner, run); err != nil {
		return Thread{}, "", err
	}
	now := Micro(m.now())
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[id]
	if !ok {
		t = &memThread{Thread: Thread{ID: id, Owner: owner, Created: now}}
		m.threads[id] = t
	}
	switch {
	case t.Owner != owner:
		return Thread{}, "", fmt.Errorf("%w: thread %q", ErrNotOwner, id)
	case t.Run == "", t.Run == run && !t.Held:
	default:
		return t.copy(), "", fmt.Errorf("%w: thread %q is held by run %q", ErrBusy, id, t.Run)
	}
	t.Run, t.Held, t.token, t.Updated = run, true, NewToken(), now
	return t.copy(), t.token, nil
}

func (t *memThread) copy() Thread {
	c := t.Thread
	c.Summary = bytes.Clone(t.Summary)
	return c
}

// held returns the thread token holds.
func (m *Memory) held(id, token string) (*memThread, error) {
	t, ok := m.threads[id]
	if !ok || token == "" || t.token != token {
		return nil, fmt.Errorf("%w: thread %q", ErrLeaseLost, id)
	}
	return t, nil
}

// Park implements [Store.Park].
func (m *Memory) Park(_ context.Context, id, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.held(id, token)
	if err != nil {
		return err
	}
	t.Held, t.token, t.Updated = false, "", Micro(m.now())
	return nil
}

// Commit implements [Store.Commit].
func (m *Memory) Commit(_ context.Context, id, token string, turn Turn, s *Summary) error {
	if err := CheckTurn(turn, s); err != nil {
		return err
	}
	now := Micro(m.now())
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.held(id, token)
	if err != nil {
		return err
	}
	if turn.Index != t.Turns+1 {
		return fmt.Errorf("%w: turn %d of thread %q, which holds %d", ErrTurn, turn.Index, id, t.Turns)
	}
	turn.Content, turn.At = bytes.Clone(turn.Content), now
	t.turns = append(t.turns, turn)
	t.Turns++
	if s != nil {
		t.Summary, t.Summarized = bytes.Clone(s.Content), s.Through
	}
	t.Run, t.Held, t.token, t.Updated = "", false, "", now
	return nil
}

// Release implements [Store.Release].
func (m *Memory) Release(_ context.Context, id, run, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[id]
	switch {
	case token != "":
		if !ok || t.token != token {
			return fmt.Errorf("%w: thread %q", ErrLeaseLost, id)
		}
	case !ok || t.Run != run:
		return nil
	case t.Held:
		return fmt.Errorf("%w: thread %q is held by run %q, running", ErrBusy, id, run)
	}
	t.Run, t.Held, t.token, t.Updated = "", false, "", Micro(m.now())
	return nil
}

// Get implements [Store.Get].
func (m *Memory) Get(_ context.Context, id string) (Thread, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[id]
	if !ok {
		return Thread{}, false, nil
	}
	return t.copy(), true, nil
}

// Turns implements [Store.Turns].
func (m *Memory) Turns(_ context.Context, id string, from, to int) ([]Turn, error) {
	from = max(from, 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[id]
	if !ok {
		return nil, nil
	}
	to = min(to, t.Turns+1)
	if from >= to {
		return nil, nil
	}
	out := make([]Turn, 0, to-from)
	for _, turn := range t.turns[from-1 : to-1] {
		turn.Content = bytes.Clone(turn.Content)
		out = append(out, turn)
	}
	return out, nil
}

// Delete implements [Store.Delete].
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	delete(m.threads, id)
	m.mu.Unlock()
	m.ev.Forget(id)
	return nil
}

// Evidence implements [Store.Evidence].
func (m *Memory) Evidence() evidence.Ledger { return m.ev }
