package sqlite_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/stores/sqlite"
)

func stores(b *testing.B) storetest.Stores {
	s := open(b, nil)
	return storetest.Stores{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger(),
		Claims: s.Claims(), Runs: s.Runs(), Audit: s.Audit(), Close: func() { _ = s.Close() }}
}

// BenchmarkGuardedRead: a read tool through the default guard chain with
// the SQLite stores (one file, WAL).
func BenchmarkGuardedRead(b *testing.B) {
	storetest.BenchGuardedRead(b, stores(b), nil)
}

// BenchmarkApprovedWrite: an approved write through the default guard
// chain with the SQLite stores.
func BenchmarkApprovedWrite(b *testing.B) {
	storetest.BenchApprovedWrite(b, stores(b), nil)
}

// floorStores opens a migrated store with n connections and the floor on
// its pool: SELECT 1, and a one-row upsert into a table of its own.
func floorStores(b *testing.B, n int) (storetest.Stores, storetest.Floor) {
	s := open(b, &sqlite.Options{MaxOpenConns: n})
	db := s.DB()
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS reactguard_bench_floor (k INTEGER PRIMARY KEY, v BLOB NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	payload := []byte(`{"id":"1","name":"Spring Sale"}`)
	floor := storetest.Floor{
		Select1: func(ctx context.Context) error {
			var one int
			return db.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
		},
		Upsert: func(ctx context.Context, k int64) error {
			_, err := db.ExecContext(ctx, `INSERT INTO reactguard_bench_floor (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`, k, payload)
			return err
		},
	}
	return storetest.Stores{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger(),
		Claims: s.Claims(), Runs: s.Runs(), Close: func() { _ = s.Close() }}, floor
}

// BenchmarkDurablePath: at concurrency 1, 8 and 32, in the same run and on
// the same pool (the default), the floor (SELECT 1, a one-row upsert), a
// guarded read and an approved write through the default guard chain.
func BenchmarkDurablePath(b *testing.B) {
	s, floor := floorStores(b, 0)
	storetest.DurablePath(b, s, floor)
}

// BenchmarkRuns: whole runs (two guarded reads, a write deferred for
// approval, the approval, ResumeRun, the approved write, the end) at
// concurrency 32 in one process, with 1, 2, 4 and 8 connections: how the
// pool size (Options.MaxOpenConns) was chosen.
func BenchmarkRuns(b *testing.B) {
	for _, conns := range []int{1, 2, 4, 8} {
		b.Run("conns="+strconv.Itoa(conns), func(b *testing.B) {
			s, _ := floorStores(b, conns)
			storetest.Runs(b, s, 32)
		})
	}
}
