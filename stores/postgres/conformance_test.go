package postgres_test

import (
	"fmt"
	"testing"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/evidence/evidencetest"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/guard/guardtest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/runstore/runstoretest"
	"github.com/reactguard/reactguard/stores/postgres"
	"github.com/reactguard/reactguard/threadstore"
	"github.com/reactguard/reactguard/threadstore/threadstoretest"
)

// Every conformance suite against one store on a real server; the suites
// use ids of their own per subtest, so one store serves them all, as one
// database serves every process of a service.
func TestConformance(t *testing.T) {
	s := open(t, nil)
	t.Run("Approvals", func(t *testing.T) {
		guardtest.RunApprovals(t, func() guard.Approvals { return s.Approvals() })
	})
	t.Run("WriteLedger", func(t *testing.T) {
		guardtest.RunWriteLedger(t, func() guard.WriteLedger { return s.WriteLedger() })
	})
	t.Run("ApprovingWriteLedger", func(t *testing.T) {
		guardtest.RunApprovingWriteLedger(t, func() (guard.ApprovingWriteLedger, guard.Approvals) {
			return s.WriteLedger(), s.Approvals()
		})
	})
	t.Run("Evidence", func(t *testing.T) {
		evidencetest.Run(t, func() evidence.Ledger { return s.Evidence() })
	})
	t.Run("EvidenceCache", func(t *testing.T) {
		evidencetest.Run(t, func() evidence.Ledger { return evidence.NewCache(s.Evidence()) })
	})
	t.Run("Claims", func(t *testing.T) {
		runstoretest.RunClaims(t, func() runstore.Claims { return s.Claims() })
	})
	t.Run("ClaimsTakeover", func(t *testing.T) {
		n := 0
		runstoretest.RunTakeover(t, func(t *testing.T) runstoretest.Holders {
			n++
			name := fmt.Sprintf("reactguard-takeover-%d", n)
			first, err := postgres.Open(bg, withParam(dsn(t), "application_name", name), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(first.Close)
			// Closing the store deletes its lease: its claims may be taken
			// over at once.
			return runstoretest.Holders{First: first.Claims(), Second: s.Claims(), End: first.Close}
		})
	})
	t.Run("Runs", func(t *testing.T) {
		runstoretest.RunStore(t, func() runstore.Store { return s.Runs() })
	})
	t.Run("Audit", func(t *testing.T) {
		runstoretest.RunAudit(t, func() runstore.Audit { return s.Audit() })
	})
	t.Run("Threads", func(t *testing.T) {
		threadstoretest.Run(t, func() threadstore.Store { return s.Threads() })
	})
	t.Run("ThreadsTakeover", func(t *testing.T) {
		n := 0
		threadstoretest.RunTakeover(t, func(t *testing.T) threadstoretest.Holders {
			n++
			name := fmt.Sprintf("reactguard-thread-takeover-%d", n)
			first, err := postgres.Open(bg, withParam(dsn(t), "application_name", name), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(first.Close)
			// Closing the store deletes its lease: its threads read as
			// held by a dead process at once.
			return threadstoretest.Holders{First: first.Threads(), Second: s.Threads(), End: first.Close}
		})
	})
}
