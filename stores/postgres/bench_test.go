package postgres_test

import (
	"context"
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
		Claims: s.Claims(), Runs: s.Runs(), Close: s.Close}, c.n.Load
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
