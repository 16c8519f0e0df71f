package runstore_test

import (
	"testing"

	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/runstore/runstoretest"
)

func TestMemoryClaims_Conformance(t *testing.T) {
	runstoretest.RunClaims(t, func() runstore.Claims { return runstore.NewMemoryClaims() })
}

func TestMemory_Conformance(t *testing.T) {
	runstoretest.RunStore(t, func() runstore.Store { return runstore.NewMemory() })
}

func TestMemory_SharedAcrossSubtests(t *testing.T) {
	shared := runstore.NewMemory()
	runstoretest.RunStore(t, func() runstore.Store { return shared })
	claims := runstore.NewMemoryClaims()
	runstoretest.RunClaims(t, func() runstore.Claims { return claims })
}

func TestMemoryAudit(t *testing.T) {
	runstoretest.RunAudit(t, func() runstore.Audit { return runstore.NewMemoryAudit() })
	shared := runstore.NewMemoryAudit()
	runstoretest.RunAudit(t, func() runstore.Audit { return shared })
}
