package guardtest_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/guard/guardtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunApprovals_Memory(t *testing.T) {
	guardtest.RunApprovals(t, func() guard.Approvals { return guard.NewMemoryApprovals() })
}

func TestRunWriteLedger_Memory(t *testing.T) {
	guardtest.RunWriteLedger(t, func() guard.WriteLedger { return guard.NewMemoryWriteLedger() })
}

func ExampleRunApprovals() {
	// In a _test.go file of a package that implements guard.Approvals:
	//
	//	func TestApprovals(t *testing.T) {
	//		guardtest.RunApprovals(t, func() guard.Approvals { return mystore.NewApprovals() })
	//	}
}

func ExampleRunWriteLedger() {
	// In a _test.go file of a package that implements guard.WriteLedger:
	//
	//	func TestWriteLedger(t *testing.T) {
	//		guardtest.RunWriteLedger(t, func() guard.WriteLedger { return mystore.NewWriteLedger() })
	//	}
}

func ExampleRunApprovingWriteLedger() {
	// In a _test.go file of a package whose write ledger consumes the
	// approvals of its own database:
	//
	//	func TestApprovingWriteLedger(t *testing.T) {
	//		guardtest.RunApprovingWriteLedger(t, func() (guard.ApprovingWriteLedger, guard.Approvals) {
	//			s := mystore.New()
	//			return s.WriteLedger(), s.Approvals()
	//		})
	//	}
}
