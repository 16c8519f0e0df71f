package postgres_test

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reactguard/reactguard/internal/storetest"
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
