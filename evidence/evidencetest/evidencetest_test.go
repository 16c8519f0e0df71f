package evidencetest_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/evidence/evidencetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun_Memory(t *testing.T) {
	evidencetest.Run(t, func() evidence.Ledger { return evidence.NewMemory() })
}

// ledgerOnly hides the Exporter methods of the ledger it wraps.
type ledgerOnly struct{ evidence.Ledger }

func TestRun_LedgerWithoutExporter(t *testing.T) {
	evidencetest.Run(t, func() evidence.Ledger { return ledgerOnly{evidence.NewMemory()} })
}

func ExampleRun() {
	// In a _test.go file of a package that implements evidence.Ledger:
	//
	//	func TestLedger(t *testing.T) {
	//		evidencetest.Run(t, func() evidence.Ledger { return mystore.New() })
	//	}
}
