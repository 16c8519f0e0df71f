package react_test

import (
	"testing"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/runstore"
)

// The person's side of approvals, as an attacker tries it, over the
// in-memory stores (stores/sqlite and stores/postgres run the same
// scenarios over theirs).
func TestPerson_MemoryStores(t *testing.T) {
	storetest.RunPerson(t, func(*testing.T) storetest.Stores {
		return storetest.Stores{
			Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger(),
			Claims: runstore.NewMemoryClaims(), Runs: runstore.NewMemory(), Audit: runstore.NewMemoryAudit(), Close: func() {},
		}
	})
}
