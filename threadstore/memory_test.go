package threadstore_test

import (
	"testing"

	"github.com/reactguard/reactguard/threadstore"
	"github.com/reactguard/reactguard/threadstore/threadstoretest"
)

func TestMemory(t *testing.T) {
	threadstoretest.Run(t, func() threadstore.Store { return threadstore.NewMemory() })
}

// One Memory shared by every subtest, as a process shares it.
func TestMemoryShared(t *testing.T) {
	m := threadstore.NewMemory()
	threadstoretest.Run(t, func() threadstore.Store { return m })
}
