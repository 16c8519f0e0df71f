package evidence

import (
	"context"
	"errors"
	"sync"
)

// Loader is implemented by ledgers kept outside the process (a database)
// that can read a run's whole evidence, records and user texts, in one
// round trip, so that a [Cache] answers every lookup of the run from
// memory, [Ledger.UserSaid] included. Load returns the records in the
// order appended and the user texts in the order added; a run never
// written loads as empty. It is not [Exporter.Export]: a Loader's state
// outlives the process and does not travel in snapshots.
type Loader interface {
	Load(ctx context.Context, run string) (Snapshot, error)
}

// TextLoader is a [Loader] that can add a user text to a run and read the
// run's whole evidence in one round trip. A [Cache] uses it for the first
// user text of a run it has not loaded (a Run's input), so that starting a
// run costs one round trip where adding the text and loading the run take
// two. The Snapshot it returns includes text, as Load would after the
// addition (a blank text, which is not added, is not in it either).
type TextLoader interface {
	Loader
	AddUserTextAndLoad(ctx context.Context, run, text string) (Snapshot, error)
}

// Cache answers the reads of a [Ledger] kept outside the process from
// memory, for runs that one process drives at a time. The first read of a
// run loads its evidence from the ledger once (through [Loader] when the
// ledger implements it, else through [Ledger.Records]) into an in-memory
// index ([Memory]); later reads of the run cost no round trip. Writes go
// to the ledger first and, once it accepted them, to the loaded index, so
// memory never holds what the ledger does not. [Cache.Release] drops a
// run, and the next read loads it again.
//
//	c := evidence.NewCache(store.Evidence())
//	defer c.Release(run)
//
// # Coherence
//
// The index of a run is the ledger's state at the load plus the writes
// made through this Cache since. It is exact as long as nothing else
// writes the run's evidence while the run is cached: a record written
// through another Cache, another process or the ledger itself is not seen
// until the run is released. Package react ensures it for the loops that
// build their own guard chain (Config.Handler nil) over a ledger that is
// not an [Exporter]: a new run has a new id, a stopped run is resumed by
// one resume at a time (its resume claim), so one process drives a run at
// a time, and the loop releases the run when every Run or Resume starts
// and ends, so a cached run never outlives the window in which this
// process drives it. A loop with a custom Handler uses no Cache: the
// host's chain may write the ledger behind it. Were a run driven by two
// processes at once anyway (a resume taken over while its process was
// still alive, see runstore.Claims), each would read a subset of the
// evidence: lookups answer false where the other wrote, which rejects
// rather than accepts, but the fingerprint guard may count fewer
// executions; the write ledger still runs each write at most once.
//
// Loading the index and writing to the ledger exclude each other per run,
// so a record written while the run loads is either in the loaded state or
// added to it after, never lost. Without a [Loader], UserSaid is asked of
// the ledger (its texts are not loaded).
//
// A Cache is safe for concurrent use. It holds the evidence of every run
// read through it until the run is released or forgotten: a host that
// uses one outside package react releases its runs. The zero value is not
// usable; build one with [NewCache].
type Cache struct {
	inner  Ledger
	loader Loader // inner as a Loader, or nil

	mu   sync.RWMutex
	runs map[string]*cached
}

// cached is one run's index. mu is held for reading by writes (through
// the ledger and into mem) and for writing by the load.
type cached struct {
	mu     sync.RWMutex
	loaded bool
	mem    *Memory
}

var _ Ledger = (*Cache)(nil)

// NewCache returns a Cache over l. It panics when l is nil.
func NewCache(l Ledger) *Cache {
	if l == nil {
		panic("evidence: NewCache of a nil Ledger")
	}
	c := &Cache{inner: l, runs: make(map[string]*cached)}
	c.loader, _ = l.(Loader)
	return c
}

// Ledger returns the ledger the Cache reads from and writes to.
func (c *Cache) Ledger() Ledger { return c.inner }

// Release drops the cached index of run; its next read loads it again. A
// write or read in flight on the run finishes against the dropped index.
func (c *Cache) Release(run string) {
	c.mu.Lock()
	delete(c.runs, run)
	c.mu.Unlock()
}

// Forget releases run and, when the ledger has a Forget(run) method,
// forgets it there too.
func (c *Cache) Forget(run string) {
	c.Release(run)
	if f, ok := c.inner.(interface{ Forget(run string) }); ok {
		f.Forget(run)
	}
}

// entry returns the run's entry, creating it unloaded.
func (c *Cache) entry(run string) *cached {
	c.mu.RLock()
	e := c.runs[run]
	c.mu.RUnlock()
	if e != nil {
		return e
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e = c.runs[run]; e == nil {
		e = &cached{mem: NewMemory()}
		c.runs[run] = e
	}
	return e
}

// view returns the run's index, loading it on first use.
func (c *Cache) view(ctx context.Context, run string) (*Memory, error) {
	e := c.entry(run)
	e.mu.RLock()
	loaded := e.loaded
	e.mu.RUnlock()
	if loaded {
		return e.mem, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.loaded {
		return e.mem, nil
	}
	var s Snapshot
	var err error
	if c.loader != nil {
		s, err = c.loader.Load(ctx, run)
	} else {
		s.Records, err = c.inner.Records(ctx, run)
	}
	if err != nil {
		return nil, err
	}
	if err := e.mem.Import(ctx, run, s); err != nil {
		return nil, errors.Join(errors.New("evidence: cache: the ledger holds a record Check refuses"), err)
	}
	e.loaded = true
	return e.mem, nil
}

// Append implements [Ledger.Append]: the ledger first, then the loaded
// index.
func (c *Cache) Append(ctx context.Context, run string, r Record) error {
	e := c.entry(run)
	e.mu.RLock()
	defer e.mu.RUnlock()
	if err := c.inner.Append(ctx, run, r); err != nil {
		return err
	}
	if e.loaded {
		return e.mem.Append(ctx, run, r)
	}
	return nil
}

// Appended adds r to the loaded index of run, when it is loaded: r is a
// record the caller has appended to the Cache's ledger itself, through
// another operation of the same database (guard.RecordingWriteLedger
// stores a write's record and its evidence in one statement). Call it only
// once the ledger accepted r, so that memory never holds what the ledger
// does not.
func (c *Cache) Appended(ctx context.Context, run string, r Record) error {
	e := c.entry(run)
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.loaded {
		return e.mem.Append(ctx, run, r)
	}
	return nil
}

// AddUserText implements [Ledger.AddUserText]: the ledger first, then the
// loaded index. For a run not loaded yet whose ledger is a [TextLoader],
// adding the text loads the run, in one round trip.
func (c *Cache) AddUserText(ctx context.Context, run, text string) error {
	e := c.entry(run)
	if tl, ok := c.inner.(TextLoader); ok {
		e.mu.Lock()
		if !e.loaded {
			defer e.mu.Unlock()
			s, err := tl.AddUserTextAndLoad(ctx, run, text)
			if err != nil {
				return err
			}
			if err := e.mem.Import(ctx, run, s); err != nil {
				return errors.Join(errors.New("evidence: cache: the ledger holds a record Check refuses"), err)
			}
			e.loaded = true
			return nil
		}
		e.mu.Unlock()
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if err := c.inner.AddUserText(ctx, run, text); err != nil {
		return err
	}
	if e.loaded && c.loader != nil {
		return e.mem.AddUserText(ctx, run, text)
	}
	return nil
}

// Records implements [Ledger.Records] from memory.
func (c *Cache) Records(ctx context.Context, run string) ([]Record, error) {
	m, err := c.view(ctx, run)
	if err != nil {
		return nil, err
	}
	return m.Records(ctx, run)
}

// Lookup implements [Ledger.Lookup] from memory.
func (c *Cache) Lookup(ctx context.Context, run, callID string) (Record, bool, error) {
	m, err := c.view(ctx, run)
	if err != nil {
		return Record{}, false, err
	}
	return m.Lookup(ctx, run, callID)
}

// HasResult implements [Ledger.HasResult] from memory.
func (c *Cache) HasResult(ctx context.Context, run, tool string) (bool, error) {
	m, err := c.view(ctx, run)
	if err != nil {
		return false, err
	}
	return m.HasResult(ctx, run, tool)
}

// HasValue implements [Ledger.HasValue] from memory.
func (c *Cache) HasValue(ctx context.Context, run, tool, field, value string) (bool, error) {
	m, err := c.view(ctx, run)
	if err != nil {
		return false, err
	}
	return m.HasValue(ctx, run, tool, field, value)
}

// Executions implements [Ledger.Executions] from memory.
func (c *Cache) Executions(ctx context.Context, run, fingerprint string) (int, Record, error) {
	if fingerprint == "" {
		return 0, Record{}, nil
	}
	m, err := c.view(ctx, run)
	if err != nil {
		return 0, Record{}, err
	}
	return m.Executions(ctx, run, fingerprint)
}

// UserSaid implements [Ledger.UserSaid] from memory when the ledger is a
// [Loader], else by asking the ledger.
func (c *Cache) UserSaid(ctx context.Context, run, value string) (bool, error) {
	if c.loader == nil {
		return c.inner.UserSaid(ctx, run, value)
	}
	m, err := c.view(ctx, run)
	if err != nil {
		return false, err
	}
	return m.UserSaid(ctx, run, value)
}
