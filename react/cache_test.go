package react_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
)

// dbLedger is an evidence ledger as a database would be: not an Exporter,
// a Loader, and every call counted as a round trip (reads and loads
// separately).
type dbLedger struct {
	m            *evidence.Memory
	reads, loads atomic.Int64
	writes       atomic.Int64
}

func newDBLedger() *dbLedger { return &dbLedger{m: evidence.NewMemory()} }

var (
	_ evidence.Ledger = (*dbLedger)(nil)
	_ evidence.Loader = (*dbLedger)(nil)
)

func (d *dbLedger) Append(ctx context.Context, run string, r evidence.Record) error {
	d.writes.Add(1)
	return d.m.Append(ctx, run, r)
}

func (d *dbLedger) AddUserText(ctx context.Context, run, text string) error {
	d.writes.Add(1)
	return d.m.AddUserText(ctx, run, text)
}

func (d *dbLedger) Records(ctx context.Context, run string) ([]evidence.Record, error) {
	d.reads.Add(1)
	return d.m.Records(ctx, run)
}

func (d *dbLedger) Lookup(ctx context.Context, run, callID string) (evidence.Record, bool, error) {
	d.reads.Add(1)
	return d.m.Lookup(ctx, run, callID)
}

func (d *dbLedger) HasResult(ctx context.Context, run, tool string) (bool, error) {
	d.reads.Add(1)
	return d.m.HasResult(ctx, run, tool)
}

func (d *dbLedger) HasValue(ctx context.Context, run, tool, field, value string) (bool, error) {
	d.reads.Add(1)
	return d.m.HasValue(ctx, run, tool, field, value)
}

func (d *dbLedger) Executions(ctx context.Context, run, fp string) (int, evidence.Record, error) {
	d.reads.Add(1)
	return d.m.Executions(ctx, run, fp)
}

func (d *dbLedger) UserSaid(ctx context.Context, run, value string) (bool, error) {
	d.reads.Add(1)
	return d.m.UserSaid(ctx, run, value)
}

func (d *dbLedger) Load(ctx context.Context, run string) (evidence.Snapshot, error) {
	d.loads.Add(1)
	return d.m.Export(ctx, run)
}

// With the default chain over a ledger kept outside the process, a Run and
// a Resume each read the run's evidence once (one load) and answer every
// lookup from memory; the snapshot carries no evidence.
func TestCache_LoopReadsEvidenceOncePerRunAndResume(t *testing.T) {
	db := newDBLedger()
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	e.guards.Ledger = db
	e.cfg.Guards = e.guards
	res, err := e.again(approvalBefore()).Run(context.Background(), approvalNode, "create a site called blog")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	assert.Zero(t, db.reads.Load(), "no lookup reached the database")
	assert.EqualValues(t, 1, db.loads.Load(), "Run loaded the run's evidence once")
	assert.NotContains(t, string(res.Snapshot), `"evidence":{`, "a database ledger's evidence stays in the database")

	got, err := e.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)
	assert.Equal(t, "SUCCESS ", outcomeOf(t, e.rec, "s"), "the output cites w2, found in the cached evidence")
	assert.Zero(t, db.reads.Load(), "no lookup reached the database")
	assert.EqualValues(t, 2, db.loads.Load(), "Resume loaded the run's evidence once more")
	assert.Equal(t, 1, create.executions())
	recs, err := db.m.Records(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Len(t, recs, 2, "l and w2 are in the database")
}

// The loop drops a run from the cache when a Run or Resume starts and when
// it ends: what another process wrote to the database in between is seen
// by the next Resume, and the host's cache holds nothing of a run that
// stopped.
func TestCache_LoopReleasesTheRun(t *testing.T) {
	ctx := context.Background()
	db := newDBLedger()
	cache := evidence.NewCache(db)
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	e.guards.Ledger = cache
	e.cfg.Guards = e.guards
	res, err := e.again(approvalBefore()).Run(ctx, approvalNode, "create a site called blog")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)

	// Another process drove an earlier part of this run and recorded x8:
	// written behind this process's cache.
	require.NoError(t, db.m.Append(ctx, "run-1", evidence.Record{CallID: "x8", Tool: "list_sites", Outcome: outcome.Success,
		Attempt: 1, Payload: []byte(`{"id":5}`)}))
	ok, err := cache.HasValue(ctx, "run-1", "list_sites", "id", "5")
	require.NoError(t, err)
	assert.True(t, ok, "the run was released when Run ended: the cache reads the database again")

	// That read cached the run again; Resume releases it when it starts,
	// so a record written now is seen too.
	require.NoError(t, db.m.Append(ctx, "run-1", evidence.Record{CallID: "x9", Tool: "create_site", Outcome: outcome.Success,
		Attempt: 1, Payload: []byte(`42`)}))
	after := newScript(
		turn(call("s", react.ToolOutputSet, `{"key":"site_id","value":42,"sourceType":"tool_result","sourceRef":"x9"}`)),
		turn(finish("f")))
	got, err := e.again(after).Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)
	assert.Equal(t, "SUCCESS ", outcomeOf(t, e.rec, "s"), "the output cites x9, written by another driver before this resume")
}

// A custom Handler may write the ledger behind the loop: the loop then
// reads the ledger as given, with no cache.
func TestCache_NoCacheWithACustomHandler(t *testing.T) {
	db := newDBLedger()
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	opts := &guard.Options{Ledger: db, Approvals: e.guards.Approvals, WriteLedger: e.guards.WriteLedger}
	chain := invoker.Chain(invoker.New(nil), guard.Default(opts)...)
	cfg := e.cfg
	cfg.Guards, cfg.Handler = opts, chain
	l, err := react.New(cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), approvalNode, "create a site called blog")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)
	assert.Zero(t, db.loads.Load(), "nothing was cached")
	assert.NotZero(t, db.reads.Load(), "every lookup asked the ledger")
}
