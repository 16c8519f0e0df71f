package sqlite_test

import (
	"testing"

	"github.com/reactguard/reactguard/internal/storetest"
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
