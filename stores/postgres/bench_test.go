package postgres_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/stores/postgres"
)

// counter counts the statements sent to the server: one round trip each.
type counter struct{ n atomic.Int64 }

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// counted opens a migrated store whose pool counts its statements.
func counted(b testing.TB) (storetest.Stores, func() int64) {
	cfg, err := pgxpool.ParseConfig(dsn(b))
	if err != nil {
		b.Fatal(err)
	}
	c := &counter{}
	cfg.ConnConfig.Tracer = c
	pool, err := pgxpool.NewWithConfig(bg, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	s, err := postgres.New(bg, pool, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	if err := s.Migrate(bg); err != nil {
		b.Fatal(err)
	}
	return storetest.Stores{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger(),
		Claims: s.Claims(), Runs: s.Runs(), Audit: s.Audit(), Close: s.Close}, c.n.Load
}

// BenchmarkGuardedRead: a read tool through the default guard chain with
// the PostgreSQL stores.
func BenchmarkGuardedRead(b *testing.B) {
	s, trips := counted(b)
	storetest.BenchGuardedRead(b, s, trips)
}

// BenchmarkApprovedWrite: an approved write through the default guard
// chain with the PostgreSQL stores.
func BenchmarkApprovedWrite(b *testing.B) {
	s, trips := counted(b)
	storetest.BenchApprovedWrite(b, s, trips)
}

// BenchmarkConcurrentRuns: 1,000 runs at once across 4 processes sharing
// one database, each run suspended for approval, approved (ResumeRun) and
// finished; reports the latency of a guarded call. Every run must finish
// with its write executed exactly once.
func BenchmarkConcurrentRuns(b *testing.B) {
	for range b.N {
		storetest.ReportLoad(b, storetest.Load(b, processes(b), 4, 250))
	}
}

// floorStore opens a migrated store over a pool of 40 connections (every
// measurement of BenchmarkDurablePath shares it) and the floor on that
// pool: SELECT 1, and a one-row upsert into a table of its own.
func floorStore(b *testing.B) (storetest.Stores, storetest.Floor) {
	st, f := floorStore2(b)
	return storetest.Stores{Ledger: st.Evidence(), Approvals: st.Approvals(), WriteLedger: st.WriteLedger(), Claims: st.Claims(), Runs: st.Runs(), Close: st.Close}, f
}

// EnvBenchPrivate, set to 1, makes the benchmarks of the durable path run
// on a private server of their own (fsync on, default settings) instead of
// the test schema's: no other client's commits share its write-ahead log.
const EnvBenchPrivate = "REACTGUARD_BENCH_PRIVATE"

// floorStore2 is floorStore, with the Store.
func floorStore2(b testing.TB) (*postgres.Store, storetest.Floor) {
	d := dsn(b)
	if os.Getenv(EnvBenchPrivate) == "1" {
		d = startPrivateWith(b, true).dsn()
	}
	pool, err := pgxpool.New(bg, withParam(d, "pool_max_conns", "40"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	s, err := postgres.New(bg, pool, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	if err := s.Migrate(bg); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(bg, `CREATE TABLE IF NOT EXISTS reactguard_bench_floor (k bigint PRIMARY KEY, v bytea NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	payload := []byte(`{"id":"1","name":"Spring Sale"}`)
	floor := storetest.Floor{
		Select1: func(ctx context.Context) error {
			var one int
			return pool.QueryRow(ctx, `SELECT 1`).Scan(&one)
		},
		Upsert: func(ctx context.Context, k int64) error {
			_, err := pool.Exec(ctx, `INSERT INTO reactguard_bench_floor (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v`, k, payload)
			return err
		},
	}
	return s, floor
}

// BenchmarkDurablePath: at concurrency 1, 8 and 32, in the same run and on
// the same pool, the floor (SELECT 1, a one-row upsert), a guarded read and
// an approved write through the default guard chain; p50, p99, the ratios
// to the upsert, and calls per second (closed loop).
func BenchmarkDurablePath(b *testing.B) {
	s, floor := floorStore(b)
	storetest.DurablePath(b, s, floor)
}

// BenchmarkRuns: whole runs (two guarded reads, a write deferred for
// approval, the approval, ResumeRun, the approved write, the end) at
// concurrency 8 and 32 in one process, on a pool of 40 connections.
func BenchmarkRuns(b *testing.B) {
	for _, c := range []int{8, 32} {
		b.Run("c="+strconv.Itoa(c), func(b *testing.B) {
			s, _ := floorStore(b)
			storetest.Runs(b, s, c)
		})
	}
}

// BenchmarkStatements: each statement of the durable path alone, called
// through the stores' own methods, in turn with the floor's upsert on the
// same pool (one connection busy at a time): an evidence append that
// writes the run's last write time (a run's first), one that leaves it
// (this Store moved it within ten seconds), the approved write's claim
// (BeginApprovedOrGate with the approval held: the key claimed and the
// approval consumed; the key the write gate derives, its default) and its
// record with its evidence (FinishRecorded), and the claim of a write
// called with an explicit idempotency key (claim-explicit-key).
// p50 in µs and the ratio of each to the upsert's p50: where an approved
// write's time goes, statement by statement.
func BenchmarkStatements(b *testing.B) {
	st, floor := floorStore2(b)
	ev, ap, wl := st.Evidence(), st.Approvals(), st.WriteLedger()
	kinds := []string{"upsert", "append-touching", "append", "claim", "finish", "claim-explicit-key"}
	lat := make([][]time.Duration, len(kinds))
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	busy := "stmt-" + stamp
	payload := []byte(`{"id":"1","name":"Spring Sale"}`)
	key := time.Now().UnixNano()
	for i := range 256 * b.N {
		id := strconv.Itoa(i)
		run := busy + "-" + id
		c := guard.GatedCall{CallID: "w", Tool: "update_site", Args: []byte(`{"id":"1"}`), Fingerprint: "fp-" + id, Round: 1}
		if err := ap.Gate(bg, run, c); err != nil {
			b.Fatal(err)
		}
		if err := ap.Approve(bg, run, c.CallID, c.Fingerprint); err != nil {
			b.Fatal(err)
		}
		xrun := run + "/x"
		if err := ap.Gate(bg, xrun, c); err != nil {
			b.Fatal(err)
		}
		if err := ap.Approve(bg, xrun, c.CallID, c.Fingerprint); err != nil {
			b.Fatal(err)
		}
		var rec guard.WriteRecord
		for k := range kinds {
			t := time.Now()
			var err error
			switch k {
			case 0:
				key++
				err = floor.Upsert(bg, key)
			case 1, 2:
				r := run // a run's first append
				if k == 2 {
					r = busy
				}
				err = ev.Append(bg, r, evidence.Record{CallID: "r" + strconv.Itoa(k) + "-" + id, Tool: "get_site", Fingerprint: "fr-" + id, Outcome: outcome.Success, Attempt: 1, Payload: payload, Round: 1})
			case 3:
				var ok bool
				rec, ok, _, err = wl.BeginApprovedOrGate(bg, guard.IdempotencyKey(run, c.Fingerprint), "update_site", run, c)
				if err == nil && !ok {
					err = fmt.Errorf("claim %d: not claimed", i)
				}
			case 5:
				var ok bool
				rec, ok, _, err = wl.BeginApprovedOrGate(bg, "stmt-key-"+xrun, "update_site", xrun, c)
				if err == nil && !ok {
					err = fmt.Errorf("claim %d of an explicit key: not claimed", i)
				}
			case 4:
				rec.State, rec.Result = guard.WriteSucceeded, []byte(`{"id":"1","updated":"true"}`)
				err = wl.FinishRecorded(bg, rec, run, evidence.Record{CallID: c.CallID, Tool: c.Tool, Fingerprint: c.Fingerprint, Outcome: outcome.Success, Attempt: 1, Payload: rec.Result, Round: 1})
			}
			lat[k] = append(lat[k], time.Since(t))
			if err != nil {
				b.Fatal(kinds[k], err)
			}
			if k == 5 { // settled, outside the measurement
				rec.State = guard.WriteSucceeded
				if err := wl.Finish(bg, rec); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	p50 := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds()) / 1e3
	}
	for k, name := range kinds {
		b.ReportMetric(p50(lat[k]), "p50-us/"+name)
		if k > 0 {
			b.ReportMetric(p50(lat[k])/p50(lat[0]), name+"/upsert")
		}
	}
	b.ReportMetric(0, "ns/op")
}
