package evidence_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/evidence/evidencetest"
	"github.com/reactguard/reactguard/outcome"
)

// remote is a ledger as a database would be: not an Exporter, every call a
// round trip (counted), and optionally a Loader. fail, when set, fails
// every call.
type remote struct {
	m      *evidence.Memory
	trips  atomic.Int64
	fail   atomic.Pointer[error]
	forgot atomic.Int64
}

func newRemote() *remote { return &remote{m: evidence.NewMemory()} }

func (r *remote) trip() error {
	r.trips.Add(1)
	if err := r.fail.Load(); err != nil {
		return *err
	}
	return nil
}

func (r *remote) Append(ctx context.Context, run string, rec evidence.Record) error {
	if err := r.trip(); err != nil {
		return err
	}
	return r.m.Append(ctx, run, rec)
}

func (r *remote) Records(ctx context.Context, run string) ([]evidence.Record, error) {
	if err := r.trip(); err != nil {
		return nil, err
	}
	return r.m.Records(ctx, run)
}

func (r *remote) Lookup(ctx context.Context, run, callID string) (evidence.Record, bool, error) {
	if err := r.trip(); err != nil {
		return evidence.Record{}, false, err
	}
	return r.m.Lookup(ctx, run, callID)
}

func (r *remote) HasResult(ctx context.Context, run, tool string) (bool, error) {
	if err := r.trip(); err != nil {
		return false, err
	}
	return r.m.HasResult(ctx, run, tool)
}

func (r *remote) HasValue(ctx context.Context, run, tool, field, value string) (bool, error) {
	if err := r.trip(); err != nil {
		return false, err
	}
	return r.m.HasValue(ctx, run, tool, field, value)
}

func (r *remote) Executions(ctx context.Context, run, fp string) (int, evidence.Record, error) {
	if err := r.trip(); err != nil {
		return 0, evidence.Record{}, err
	}
	return r.m.Executions(ctx, run, fp)
}

func (r *remote) AddUserText(ctx context.Context, run, text string) error {
	if err := r.trip(); err != nil {
		return err
	}
	return r.m.AddUserText(ctx, run, text)
}

func (r *remote) UserSaid(ctx context.Context, run, value string) (bool, error) {
	if err := r.trip(); err != nil {
		return false, err
	}
	return r.m.UserSaid(ctx, run, value)
}

func (r *remote) Forget(run string) { r.forgot.Add(1); r.m.Forget(run) }

// loadingRemote is a remote that is a Loader.
type loadingRemote struct{ *remote }

func (r loadingRemote) Load(ctx context.Context, run string) (evidence.Snapshot, error) {
	if err := r.trip(); err != nil {
		return evidence.Snapshot{}, err
	}
	return r.m.Export(ctx, run)
}

var _ evidence.Loader = loadingRemote{}

func TestCache_Conformance(t *testing.T) {
	t.Run("over a Loader", func(t *testing.T) {
		evidencetest.Run(t, func() evidence.Ledger { return evidence.NewCache(loadingRemote{newRemote()}) })
	})
	t.Run("over a TextLoader", func(t *testing.T) {
		evidencetest.Run(t, func() evidence.Ledger { return evidence.NewCache(textLoading{loadingRemote{newRemote()}}) })
	})
	t.Run("over a plain Ledger", func(t *testing.T) {
		evidencetest.Run(t, func() evidence.Ledger { return evidence.NewCache(newRemote()) })
	})
}

func success(callID string, attempt int, payload string) evidence.Record {
	return evidence.Record{CallID: callID, Tool: "list_sites", Fingerprint: "fp-" + callID, Outcome: outcome.Success,
		Attempt: attempt, Payload: []byte(payload), Round: 1}
}

// After the load, reads cost no round trip; each write costs one.
func TestCache_ReadsFromMemoryAfterOneLoad(t *testing.T) {
	ctx := context.Background()
	for _, loader := range []bool{true, false} {
		t.Run(fmt.Sprintf("loader=%v", loader), func(t *testing.T) {
			r := newRemote()
			var inner evidence.Ledger = r
			if loader {
				inner = loadingRemote{r}
			}
			require.NoError(t, r.m.AddUserText(ctx, "run", "create site 42 in sp-1"))
			require.NoError(t, r.m.Append(ctx, "run", success("c1", 1, `{"id":"s-1"}`)))
			c := evidence.NewCache(inner)
			for range 3 {
				n, last, err := c.Executions(ctx, "run", "fp-c1")
				require.NoError(t, err)
				assert.Equal(t, 1, n)
				assert.Equal(t, "c1", last.CallID)
				ok, err := c.HasValue(ctx, "run", "list_sites", "id", "s-1")
				require.NoError(t, err)
				assert.True(t, ok)
				ok, err = c.HasResult(ctx, "run", "list_sites")
				require.NoError(t, err)
				assert.True(t, ok)
				_, ok, err = c.Lookup(ctx, "run", "c1")
				require.NoError(t, err)
				assert.True(t, ok)
			}
			assert.EqualValues(t, 1, r.trips.Load(), "one load, then every read from memory")

			require.NoError(t, c.Append(ctx, "run", success("c2", 1, `{"id":"s-2"}`)))
			require.NoError(t, c.AddUserText(ctx, "run", "and call it blog"))
			assert.EqualValues(t, 3, r.trips.Load(), "a write is one round trip")
			ok, err := c.HasValue(ctx, "run", "list_sites", "id", "s-2")
			require.NoError(t, err)
			assert.True(t, ok, "a write through the cache is read back from memory")
			ok, err = c.UserSaid(ctx, "run", "blog")
			require.NoError(t, err)
			assert.True(t, ok)
			want := int64(3)
			if !loader {
				want = 4 // without a Loader, UserSaid asks the ledger
			}
			assert.Equal(t, want, r.trips.Load())
			recs, err := c.Records(ctx, "run")
			require.NoError(t, err)
			inRemote, err := r.m.Records(ctx, "run")
			require.NoError(t, err)
			assert.Equal(t, inRemote, recs, "the cache holds exactly what the ledger holds, in order")
		})
	}
}

// A write the cache did not see (another process wrote the ledger) stays
// invisible until the run is released: the single-driver contract. After
// Release the next read loads it.
func TestCache_ReleaseReloads(t *testing.T) {
	ctx := context.Background()
	r := newRemote()
	c := evidence.NewCache(loadingRemote{r})
	ok, err := c.HasResult(ctx, "run", "list_sites")
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, r.m.Append(ctx, "run", success("c1", 1, `{"id":"s-1"}`))) // behind the cache
	ok, err = c.HasResult(ctx, "run", "list_sites")
	require.NoError(t, err)
	assert.False(t, ok, "a write behind the cache is not seen while the run is cached")
	c.Release("run")
	ok, err = c.HasResult(ctx, "run", "list_sites")
	require.NoError(t, err)
	assert.True(t, ok, "released, the run loads again")
	assert.EqualValues(t, 2, r.trips.Load())
}

// A failing ledger: a failed load is returned and retried by the next
// read; a write the ledger refused never reaches memory.
func TestCache_Failures(t *testing.T) {
	ctx := context.Background()
	r := newRemote()
	c := evidence.NewCache(loadingRemote{r})
	down := errors.New("database down")
	r.fail.Store(&down)
	_, err := c.HasResult(ctx, "run", "list_sites")
	require.ErrorIs(t, err, down)
	r.fail.Store(nil)
	ok, err := c.HasResult(ctx, "run", "list_sites")
	require.NoError(t, err, "the load is tried again")
	assert.False(t, ok)

	r.fail.Store(&down)
	require.ErrorIs(t, c.Append(ctx, "run", success("c1", 1, `{"id":"s-1"}`)), down)
	require.ErrorIs(t, c.AddUserText(ctx, "run", "blog"), down)
	r.fail.Store(nil)
	ok, err = c.HasResult(ctx, "run", "list_sites")
	require.NoError(t, err)
	assert.False(t, ok, "a record the ledger refused is not in memory")
	ok, err = c.UserSaid(ctx, "run", "blog")
	require.NoError(t, err)
	assert.False(t, ok, "a text the ledger refused is not in memory")
	require.ErrorIs(t, c.Append(ctx, "run", evidence.Record{CallID: "c9", Tool: "t", Attempt: 1}), evidence.ErrNotExecuted)
}

// Writes racing the load and each other: nothing is lost or doubled, and
// the cache ends up holding exactly what the ledger holds.
func TestCache_ConcurrentLoadAndWrites(t *testing.T) {
	ctx := context.Background()
	for round := range 20 {
		r := newRemote()
		c := evidence.NewCache(loadingRemote{r})
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				id := "c" + strconv.Itoa(i)
				assert.NoError(t, c.Append(ctx, "run", success(id, 1, `{"id":"`+id+`"}`)))
			})
			wg.Go(func() {
				_, err := c.HasValue(ctx, "run", "", "", "c1")
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		recs, err := c.Records(ctx, "run")
		require.NoError(t, err)
		ids := func(rs []evidence.Record) []string {
			out := make([]string, len(rs))
			for i, r := range rs {
				out[i] = r.CallID
			}
			slices.Sort(out)
			return out
		}
		inRemote, err := r.m.Records(ctx, "run")
		require.NoError(t, err)
		require.Len(t, inRemote, 16)
		require.Equal(t, ids(inRemote), ids(recs), "round %d: the cache holds every record once", round)
		for i := range 16 {
			ok, err := c.HasValue(ctx, "run", "list_sites", "id", "c"+strconv.Itoa(i))
			require.NoError(t, err)
			require.True(t, ok)
		}
	}
}

func TestCache_ForgetAndNil(t *testing.T) {
	r := newRemote()
	c := evidence.NewCache(r)
	require.NoError(t, c.Append(context.Background(), "run", success("c1", 1, `{}`)))
	c.Forget("run")
	assert.EqualValues(t, 1, r.forgot.Load(), "Forget reaches the ledger")
	assert.Same(t, evidence.Ledger(r), c.Ledger())
	assert.Panics(t, func() { evidence.NewCache(nil) })
}

// A Cache over a ledger kept in a database answers a run's reads from
// memory after one load; writes go to the database and to memory.
func ExampleCache() {
	ctx := context.Background()
	db := newRemote() // stands for a database-backed ledger (stores/postgres, stores/sqlite)
	c := evidence.NewCache(loadingRemote{db})
	defer c.Release("run-1") // the run's index lives while this process drives the run

	_ = c.AddUserText(ctx, "run-1", "delete site 42")
	_ = c.Append(ctx, "run-1", evidence.Record{CallID: "c1", Tool: "list_sites", Outcome: outcome.Success, Attempt: 1,
		Payload: []byte(`{"sites":[{"id":42}]}`)})
	for range 3 {
		ok, _ := c.HasValue(ctx, "run-1", "list_sites", "sites.id", "42")
		said, _ := c.UserSaid(ctx, "run-1", "42")
		fmt.Println(ok, said)
	}
	fmt.Println("round trips:", db.trips.Load())
	// Output:
	// true true
	// true true
	// true true
	// round trips: 3
}

// textLoading is a loadingRemote that adds a user text and loads the run
// in one round trip.
type textLoading struct{ loadingRemote }

func (l textLoading) AddUserTextAndLoad(ctx context.Context, run, text string) (evidence.Snapshot, error) {
	if err := l.trip(); err != nil {
		return evidence.Snapshot{}, err
	}
	if err := l.m.AddUserText(ctx, run, text); err != nil {
		return evidence.Snapshot{}, err
	}
	return l.m.Export(ctx, run)
}

// A run's first user text, through a TextLoader, loads the run with it: one
// round trip, and every read after it is answered from memory; a later
// text, once loaded, is added as usual. A ledger error leaves the run
// unloaded.
func TestCache_TextLoaderLoadsWithTheFirstText(t *testing.T) {
	ctx := context.Background()
	r := textLoading{loadingRemote{newRemote()}}
	require.NoError(t, r.m.Append(ctx, "run", evidence.Record{CallID: "c0", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"x"}`)}))
	c := evidence.NewCache(r)
	require.NoError(t, c.AddUserText(ctx, "run", "create blog"))
	assert.EqualValues(t, 1, r.trips.Load(), "the text and the load: one round trip")
	said, err := c.UserSaid(ctx, "run", "blog")
	require.NoError(t, err)
	assert.True(t, said)
	has, err := c.HasValue(ctx, "run", "t", "id", "x")
	require.NoError(t, err)
	assert.True(t, has, "the earlier record was loaded with the text")
	assert.EqualValues(t, 1, r.trips.Load(), "reads from memory")
	require.NoError(t, c.AddUserText(ctx, "run", "in space 7"))
	assert.EqualValues(t, 2, r.trips.Load(), "a later text: one round trip, no load")
	said, err = c.UserSaid(ctx, "run", "space 7")
	require.NoError(t, err)
	assert.True(t, said, "the later text is in the cached index")

	down := errors.New("down")
	r.fail.Store(&down)
	require.ErrorIs(t, c.AddUserText(ctx, "other", "hi"), down)
	r.fail.Store(nil)
	_, err = c.UserSaid(ctx, "other", "hi")
	require.NoError(t, err)
	assert.EqualValues(t, 4, r.trips.Load(), "a failed text-and-load leaves the run unloaded: the next read loads it")
}

// Appended adds a record the caller stored itself to a loaded run, and
// does nothing to a run not loaded (its next load reads the ledger).
func TestCache_Appended(t *testing.T) {
	ctx := context.Background()
	r := loadingRemote{newRemote()}
	c := evidence.NewCache(r)
	rec := evidence.Record{CallID: "w1", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"y"}`)}
	require.NoError(t, c.Appended(ctx, "cold", rec))
	_, ok, err := c.Lookup(ctx, "cold", "w1")
	require.NoError(t, err)
	assert.False(t, ok, "not loaded: Appended kept nothing, the ledger (which lacks it) is read")
	_, ok, err = c.Lookup(ctx, "warm", "w0") // loads "warm"
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, r.m.Append(ctx, "warm", rec)) // the caller's own statement
	require.NoError(t, c.Appended(ctx, "warm", rec))
	got, ok, err := c.Lookup(ctx, "warm", "w1")
	require.NoError(t, err)
	require.True(t, ok, "the loaded index holds the appended record")
	assert.Equal(t, "w1", got.CallID)
}
