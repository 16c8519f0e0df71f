package threadstore_test

import (
	"context"
	"testing"
	"unicode/utf8"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/evidence/evidencetest"
	"github.com/reactguard/reactguard/threadstore"
)

// EvidenceIn is a ledger keyed by thread id over a ledger of runs.
func TestEvidenceIn(t *testing.T) {
	evidencetest.Run(t, func() evidence.Ledger { return threadstore.EvidenceIn(evidence.NewMemory()) })
}

// A thread's evidence sits in the ledger of runs under a key no run id can
// have, and apart from the run of the same name.
func TestEvidenceInKeys(t *testing.T) {
	ctx := context.Background()
	runs := evidence.NewMemory()
	threads := threadstore.EvidenceIn(runs)
	if err := threads.AddUserText(ctx, "t1", "order A-17"); err != nil {
		t.Fatal(err)
	}
	if said, _ := runs.UserSaid(ctx, "t1", "A-17"); said {
		t.Fatal("the run named t1 holds what thread t1's user said")
	}
	if said, _ := runs.UserSaid(ctx, threadstore.Key("t1"), "A-17"); !said {
		t.Fatal("the ledger of runs does not hold thread t1's words under Key(t1)")
	}
	k := threadstore.Key("t1")
	if utf8.ValidString(k) || !threadstore.IsKey(k) || threadstore.IsKey("t1") {
		t.Fatalf("Key(t1) = %q: valid UTF-8 %v, IsKey %v; want a key no run id can be", k, utf8.ValidString(k), threadstore.IsKey(k))
	}
	if k <= "\U0010FFFF" {
		t.Fatalf("Key(t1) = %q sorts before a run id; want every thread key after every valid UTF-8 text", k)
	}
}
