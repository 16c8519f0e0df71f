// Package threadstoretest checks that implementations keep the contract of
// [threadstore.Store]. Run it from a test of the implementation:
//
//	func TestThreads(t *testing.T) {
//		threadstoretest.Run(t, func() threadstore.Store { return mystore.Threads() })
//	}
//
// A store that takes over the leases of dead drivers (see
// [threadstore.Store.Acquire]) runs [RunTakeover] too, with two handles on
// one shared store, the first of which it can end as a process that died.
//
// Each subtest uses thread ids derived from its own name and a random part
// per call, so a store shared between subtests, or kept between runs of
// the suite, passes too. The atomicity case starts [Concurrency]
// goroutines and joins all of them before it returns.
package threadstoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/evidence/evidencetest"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/threadstore"
)

// Concurrency is how many goroutines the atomicity case starts.
const Concurrency = 64

var bg = context.Background()

var (
	alice = runstore.Owner{Tenant: "acme", User: "alice"}
	bob   = runstore.Owner{Tenant: "acme", User: "bob"}
)

type storeCase struct {
	name string
	run  func(t *testing.T, s threadstore.Store, id string)
}

// Run runs the [threadstore.Store] contract tests as subtests of t, each
// with a store from newStore, and the evidence ledger's contract
// (evidencetest) on the store's Evidence.
func Run(t *testing.T, newStore func() threadstore.Store) {
	t.Helper()
	n := nonce()
	for _, c := range storeCases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newStore(), "thread/"+t.Name()+"/"+n)
		})
	}
	t.Run("Evidence", func(t *testing.T) {
		evidencetest.Run(t, func() evidence.Ledger { return newStore().Evidence() })
	})
}

var storeCases = []storeCase{
	{"AcquireCreates", acquireCreates},
	{"OtherOwnerIsRefused", otherOwnerIsRefused},
	{"HeldThreadIsBusy", heldThreadIsBusy},
	{"AcquireIsAtomic", acquireIsAtomic},
	{"ParkedThreadWaitsForItsRun", parkedThreadWaitsForItsRun},
	{"CommitAppendsAndFrees", commitAppendsAndFrees},
	{"CommitNeedsTheNextIndex", commitNeedsTheNextIndex},
	{"StaleTokenIsRefused", staleTokenIsRefused},
	{"SummaryIsKept", summaryIsKept},
	{"TurnsAreRanges", turnsAreRanges},
	{"ReleaseByToken", releaseByToken},
	{"ReleaseParkedByRun", releaseParkedByRun},
	{"DeleteRemovesEverything", deleteRemovesEverything},
	{"InvalidInputIsRefused", invalidInputIsRefused},
	{"BytesAreCopied", bytesAreCopied},
	{"ThreadsAreIsolated", threadsAreIsolated},
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func nonce() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// acquire takes id for run and fails t unless it succeeds.
func acquire(t *testing.T, s threadstore.Store, id, run string) (threadstore.Thread, string) {
	t.Helper()
	th, tok, err := s.Acquire(bg, id, alice, run)
	if err != nil {
		t.Fatalf("Acquire(%q, %s) = %v; want it taken", id, run, err)
	}
	if tok == "" {
		t.Fatalf("Acquire(%q, %s) returned no token", id, run)
	}
	return th, tok
}

// busy asserts that run cannot take id, and that the error names holder.
func busy(t *testing.T, s threadstore.Store, id, run, holder, why string) threadstore.Thread {
	t.Helper()
	th, tok, err := s.Acquire(bg, id, alice, run)
	if !errors.Is(err, threadstore.ErrBusy) {
		t.Fatalf("%s: Acquire(%q, %s) = %v; want ErrBusy", why, id, run, err)
	}
	if tok != "" || th.Run != holder {
		t.Fatalf("%s: Acquire(%q, %s) returned token %q and a thread held by %q; want no token and the holder %q", why, id, run, tok, th.Run, holder)
	}
	return th
}

func get(t *testing.T, s threadstore.Store, id string) threadstore.Thread {
	t.Helper()
	th, ok, err := s.Get(bg, id)
	must(t, err)
	if !ok {
		t.Fatalf("Get(%q): no thread", id)
	}
	return th
}

func turn(i int, run string) threadstore.Turn {
	return threadstore.Turn{Index: i, Run: run, Tokens: 10 * i, Content: []byte(fmt.Sprintf(`{"turn":%d}`, i))}
}

func acquireCreates(t *testing.T, s threadstore.Store, id string) {
	if _, ok, err := s.Get(bg, id); err != nil || ok {
		t.Fatalf("Get of a new id = %v, %v; want nothing", ok, err)
	}
	before := time.Now().Add(-time.Minute)
	th, _ := acquire(t, s, id, "r1")
	if th.ID != id || th.Owner != alice || th.Turns != 0 || th.Run != "r1" || !th.Held {
		t.Fatalf("Acquire of a new thread = %+v; want it created for %v, held by r1, no turns", th, alice)
	}
	got := get(t, s, id)
	if got.Owner != alice || got.Run != "r1" || !got.Held || got.Turns != 0 || got.Summary != nil {
		t.Fatalf("Get after Acquire = %+v; want alice's thread held by r1", got)
	}
	if got.Created.Before(before) || got.Updated.Before(got.Created) || got.Created.Location() != time.UTC {
		t.Fatalf("Get: created %v, updated %v; want UTC times, updated not before created", got.Created, got.Updated)
	}
}

func otherOwnerIsRefused(t *testing.T, s threadstore.Store, id string) {
	_, tok := acquire(t, s, id, "r1")
	must(t, s.Park(bg, id, tok))
	for _, o := range []runstore.Owner{bob, {Tenant: "acme"}, {Tenant: "beta", User: "alice"}, {}} {
		th, tok, err := s.Acquire(bg, id, o, "r1")
		if !errors.Is(err, threadstore.ErrNotOwner) {
			t.Fatalf("Acquire by %v of alice's thread = %v; want ErrNotOwner", o, err)
		}
		if tok != "" || th.Run != "" || th.Turns != 0 {
			t.Fatalf("Acquire by %v returned %+v, %q; want nothing about the thread", o, th, tok)
		}
	}
	if got := get(t, s, id); got.Run != "r1" || got.Held {
		t.Fatalf("thread after refused Acquires = %+v; want it still parked on r1", got)
	}
}

func heldThreadIsBusy(t *testing.T, s threadstore.Store, id string) {
	acquire(t, s, id, "r1")
	th := busy(t, s, id, "r2", "r1", "another run while r1 runs")
	if !th.Held {
		t.Fatal("the busy thread is not reported Held")
	}
	busy(t, s, id, "r1", "r1", "the same run again while its lease lives (a second resume)")
}

func acquireIsAtomic(t *testing.T, s threadstore.Store, id string) {
	var won atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, Concurrency)
	for i := range Concurrency {
		wg.Go(func() {
			_, tok, err := s.Acquire(bg, id, alice, fmt.Sprintf("r%d", i))
			switch {
			case err == nil && tok != "":
				won.Add(1)
			case errors.Is(err, threadstore.ErrBusy):
			default:
				errs <- fmt.Errorf("acquire #%d = %q, %w; want a token or ErrBusy", i, tok, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := won.Load(); n != 1 {
		t.Fatalf("%d concurrent Acquires of one new thread: %d succeeded; want exactly 1", Concurrency, n)
	}
}

func parkedThreadWaitsForItsRun(t *testing.T, s threadstore.Store, id string) {
	_, tok := acquire(t, s, id, "r1")
	must(t, s.Park(bg, id, tok))
	if got := get(t, s, id); got.Run != "r1" || got.Held {
		t.Fatalf("thread after Park = %+v; want it parked on r1, not held", got)
	}
	th := busy(t, s, id, "r2", "r1", "another run while r1 waits")
	if th.Held {
		t.Fatal("a parked thread is reported Held")
	}
	if err := s.Park(bg, id, tok); !errors.Is(err, threadstore.ErrLeaseLost) {
		t.Fatalf("Park with the token given up = %v; want ErrLeaseLost", err)
	}
	_, tok2 := acquire(t, s, id, "r1") // r1 is resumed
	if tok2 == tok {
		t.Fatal("a new lease has the old token")
	}
	must(t, s.Commit(bg, id, tok2, turn(1, "r1"), nil))
	acquire(t, s, id, "r2")
}

func commitAppendsAndFrees(t *testing.T, s threadstore.Store, id string) {
	for i := 1; i <= 3; i++ {
		run := fmt.Sprintf("r%d", i)
		th, tok := acquire(t, s, id, run)
		if th.Turns != i-1 {
			t.Fatalf("Acquire for turn %d: Turns = %d; want %d", i, th.Turns, i-1)
		}
		before := time.Now().Add(-time.Minute)
		must(t, s.Commit(bg, id, tok, turn(i, run), nil))
		got := get(t, s, id)
		if got.Turns != i || got.Run != "" || got.Held {
			t.Fatalf("thread after Commit of turn %d = %+v; want %d turns, free", i, got, i)
		}
		turns, err := s.Turns(bg, id, i, i+1)
		must(t, err)
		if len(turns) != 1 || turns[0].Index != i || turns[0].Run != run || turns[0].Tokens != 10*i ||
			!bytes.Equal(turns[0].Content, turn(i, run).Content) || turns[0].At.Before(before) {
			t.Fatalf("Turns(%d, %d) = %+v; want turn %d of %s as committed", i, i+1, turns, i, run)
		}
		if err := s.Commit(bg, id, tok, turn(i+1, run), nil); !errors.Is(err, threadstore.ErrLeaseLost) {
			t.Fatalf("Commit again with a token spent by Commit = %v; want ErrLeaseLost", err)
		}
	}
}

func commitNeedsTheNextIndex(t *testing.T, s threadstore.Store, id string) {
	_, tok := acquire(t, s, id, "r1")
	for _, i := range []int{2, 5} {
		if err := s.Commit(bg, id, tok, turn(i, "r1"), nil); !errors.Is(err, threadstore.ErrTurn) {
			t.Fatalf("Commit of turn %d to a thread of 0 turns = %v; want ErrTurn", i, err)
		}
	}
	if got := get(t, s, id); got.Turns != 0 || got.Run != "r1" || !got.Held {
		t.Fatalf("thread after refused Commits = %+v; want it unchanged, held by r1", got)
	}
	must(t, s.Commit(bg, id, tok, turn(1, "r1"), nil))
}

func staleTokenIsRefused(t *testing.T, s threadstore.Store, id string) {
	_, tok := acquire(t, s, id, "r1")
	for name, f := range map[string]func(string) error{
		"Park":    func(tok string) error { return s.Park(bg, id, tok) },
		"Commit":  func(tok string) error { return s.Commit(bg, id, tok, turn(1, "r1"), nil) },
		"Release": func(tok string) error { return s.Release(bg, id, "r1", tok) },
	} {
		for _, bad := range []string{tok + "x", "forged"} {
			if err := f(bad); !errors.Is(err, threadstore.ErrLeaseLost) {
				t.Fatalf("%s with token %q = %v; want ErrLeaseLost", name, bad, err)
			}
		}
	}
	if got := get(t, s, id); got.Run != "r1" || !got.Held || got.Turns != 0 {
		t.Fatalf("thread after forged tokens = %+v; want it unchanged", got)
	}
	if err := s.Park(bg, "thread/none/"+nonce(), tok); !errors.Is(err, threadstore.ErrLeaseLost) {
		t.Fatalf("Park of a missing thread = %v; want ErrLeaseLost", err)
	}
}

func summaryIsKept(t *testing.T, s threadstore.Store, id string) {
	for i := 1; i <= 3; i++ {
		_, tok := acquire(t, s, id, fmt.Sprintf("r%d", i))
		var sum *threadstore.Summary
		if i == 3 {
			sum = &threadstore.Summary{Content: []byte("sealed summary of 1-2"), Through: 2}
		}
		must(t, s.Commit(bg, id, tok, turn(i, fmt.Sprintf("r%d", i)), sum))
		if got := get(t, s, id); i < 3 && (got.Summary != nil || got.Summarized != 0) {
			t.Fatalf("thread after turn %d without a summary = %+v; want none", i, got)
		}
	}
	got := get(t, s, id)
	if string(got.Summary) != "sealed summary of 1-2" || got.Summarized != 2 {
		t.Fatalf("summary = %q through %d; want the committed one through 2", got.Summary, got.Summarized)
	}
	th, tok := acquire(t, s, id, "r4")
	if string(th.Summary) != "sealed summary of 1-2" || th.Summarized != 2 {
		t.Fatalf("Acquire's thread has summary %q through %d; want the committed one", th.Summary, th.Summarized)
	}
	must(t, s.Commit(bg, id, tok, turn(4, "r4"), nil))
	if got := get(t, s, id); string(got.Summary) != "sealed summary of 1-2" || got.Summarized != 2 {
		t.Fatalf("a Commit without a summary changed it to %q through %d", got.Summary, got.Summarized)
	}
}

func turnsAreRanges(t *testing.T, s threadstore.Store, id string) {
	for i := 1; i <= 5; i++ {
		_, tok := acquire(t, s, id, fmt.Sprintf("r%d", i))
		must(t, s.Commit(bg, id, tok, turn(i, fmt.Sprintf("r%d", i)), nil))
	}
	for _, c := range []struct {
		from, to int
		want     []int
		why      string
	}{
		{1, 6, []int{1, 2, 3, 4, 5}, "all"},
		{0, 3, []int{1, 2}, "from below 1 means 1"},
		{-5, 2, []int{1}, "negative from"},
		{3, 100, []int{3, 4, 5}, "to past the end"},
		{4, 4, nil, "empty range"},
		{5, 2, nil, "reversed range"},
		{6, 10, nil, "past the last turn"},
	} {
		turns, err := s.Turns(bg, id, c.from, c.to)
		must(t, err)
		var got []int
		for _, tr := range turns {
			got = append(got, tr.Index)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Turns(%d, %d) = %v; want %v (%s)", c.from, c.to, got, c.want, c.why)
		}
	}
	if turns, err := s.Turns(bg, "thread/none/"+nonce(), 1, 10); err != nil || len(turns) != 0 {
		t.Fatalf("Turns of a missing thread = %v, %v; want none", turns, err)
	}
}

func releaseByToken(t *testing.T, s threadstore.Store, id string) {
	_, tok := acquire(t, s, id, "r1")
	must(t, s.Release(bg, id, "r1", tok))
	if got := get(t, s, id); got.Run != "" || got.Held || got.Turns != 0 {
		t.Fatalf("thread after Release = %+v; want it free, no turn", got)
	}
	if err := s.Release(bg, id, "r1", tok); !errors.Is(err, threadstore.ErrLeaseLost) {
		t.Fatalf("Release with a spent token = %v; want ErrLeaseLost", err)
	}
	_, tok = acquire(t, s, id, "r2")
	if err := s.Release(bg, id, "r2", ""); !errors.Is(err, threadstore.ErrBusy) {
		t.Fatalf("Release without a token of a live lease = %v; want ErrBusy", err)
	}
	must(t, s.Release(bg, id, "r9", "")) // not r9's: a no-op
	if got := get(t, s, id); got.Run != "r2" || !got.Held {
		t.Fatalf("thread after Release of another run = %+v; want it still held by r2", got)
	}
	must(t, s.Commit(bg, id, tok, turn(1, "r2"), nil))
	must(t, s.Release(bg, "thread/none/"+nonce(), "r1", ""))
}

func releaseParkedByRun(t *testing.T, s threadstore.Store, id string) {
	_, tok := acquire(t, s, id, "r1")
	must(t, s.Park(bg, id, tok))
	must(t, s.Release(bg, id, "r2", "")) // another run's: no-op
	if got := get(t, s, id); got.Run != "r1" {
		t.Fatalf("thread after Release of r2 = %+v; want it parked on r1", got)
	}
	must(t, s.Release(bg, id, "r1", ""))
	if got := get(t, s, id); got.Run != "" || got.Held {
		t.Fatalf("thread after Release of its parked run = %+v; want it free", got)
	}
	acquire(t, s, id, "r2")
}

func deleteRemovesEverything(t *testing.T, s threadstore.Store, id string) {
	_, tok := acquire(t, s, id, "r1")
	must(t, s.Commit(bg, id, tok, turn(1, "r1"), &threadstore.Summary{Content: []byte("s"), Through: 1}))
	ev := s.Evidence()
	must(t, ev.AddUserText(bg, id, "my order is A-17"))
	must(t, ev.Append(bg, id, evidence.Record{CallID: "turn1_c1", Tool: "get_order", Outcome: outcome.Success, Payload: []byte(`{"id":"A-17"}`), Attempt: 1}))
	_, tok = acquire(t, s, id, "r2")
	must(t, s.Delete(bg, id))
	if _, ok, err := s.Get(bg, id); err != nil || ok {
		t.Fatalf("Get after Delete = %v, %v; want nothing", ok, err)
	}
	if turns, err := s.Turns(bg, id, 1, 10); err != nil || len(turns) != 0 {
		t.Fatalf("Turns after Delete = %v, %v; want none", turns, err)
	}
	if said, err := ev.UserSaid(bg, id, "A-17"); err != nil || said {
		t.Fatalf("UserSaid after Delete = %v, %v; want the evidence gone", said, err)
	}
	if recs, err := ev.Records(bg, id); err != nil || len(recs) != 0 {
		t.Fatalf("Records after Delete = %v, %v; want none", recs, err)
	}
	if err := s.Commit(bg, id, tok, turn(2, "r2"), nil); !errors.Is(err, threadstore.ErrLeaseLost) {
		t.Fatalf("Commit of the deleted thread's lease = %v; want ErrLeaseLost", err)
	}
	must(t, s.Delete(bg, id)) // missing: no-op
	th, _ := acquire(t, s, id, "r3")
	if th.Turns != 0 {
		t.Fatalf("a thread created again under a deleted id has %d turns; want 0", th.Turns)
	}
}

func invalidInputIsRefused(t *testing.T, s threadstore.Store, id string) {
	for _, c := range []struct {
		id    string
		owner runstore.Owner
		run   string
		why   string
	}{
		{"", alice, "r1", "empty id"},
		{strings.Repeat("x", threadstore.MaxID+1), alice, "r1", "id too long"},
		{"bad\xff", alice, "r1", "id not UTF-8"},
		{id, alice, "", "empty run"},
		{id, alice, "bad\xff", "run not UTF-8"},
		{id, runstore.Owner{Tenant: "bad\xff"}, "r1", "owner not UTF-8"},
		{id, runstore.Owner{User: strings.Repeat("u", runstore.MaxOwnerPart+1)}, "r1", "owner too long"},
	} {
		if _, _, err := s.Acquire(bg, c.id, c.owner, c.run); !errors.Is(err, threadstore.ErrInvalid) {
			t.Errorf("Acquire with %s = %v; want ErrInvalid", c.why, err)
		}
	}
	if _, ok, err := s.Get(bg, id); err != nil || ok {
		t.Fatalf("Get after refused Acquires = %v, %v; want no thread created", ok, err)
	}
	_, tok := acquire(t, s, id, "r1")
	for _, c := range []struct {
		turn threadstore.Turn
		sum  *threadstore.Summary
		why  string
	}{
		{threadstore.Turn{Index: 0, Run: "r1", Content: []byte("x")}, nil, "index 0"},
		{threadstore.Turn{Index: 1, Run: "r1"}, nil, "no content"},
		{threadstore.Turn{Index: 1, Run: "r1", Tokens: -1, Content: []byte("x")}, nil, "negative tokens"},
		{threadstore.Turn{Index: 1, Content: []byte("x")}, nil, "no run"},
		{turn(1, "r1"), &threadstore.Summary{Content: []byte("s"), Through: 2}, "summary past the turn"},
		{turn(1, "r1"), &threadstore.Summary{Through: 1}, "summary without content"},
	} {
		if err := s.Commit(bg, id, tok, c.turn, c.sum); !errors.Is(err, threadstore.ErrInvalid) {
			t.Errorf("Commit with %s = %v; want ErrInvalid", c.why, err)
		}
	}
	if got := get(t, s, id); got.Turns != 0 || got.Run != "r1" || !got.Held {
		t.Fatalf("thread after refused Commits = %+v; want it unchanged", got)
	}
}

func bytesAreCopied(t *testing.T, s threadstore.Store, id string) {
	_, tok := acquire(t, s, id, "r1")
	tr := turn(1, "r1")
	sum := &threadstore.Summary{Content: []byte("summary"), Through: 1}
	must(t, s.Commit(bg, id, tok, tr, sum))
	tr.Content[0], sum.Content[0] = 'X', 'X'
	turns, err := s.Turns(bg, id, 1, 2)
	must(t, err)
	if turns[0].Content[0] == 'X' || get(t, s, id).Summary[0] == 'X' {
		t.Fatal("the store kept the caller's slices; want copies")
	}
	turns[0].Content[1] = 'Y'
	again, err := s.Turns(bg, id, 1, 2)
	must(t, err)
	if again[0].Content[1] == 'Y' {
		t.Fatal("Turns returned the store's own slice; want a copy")
	}
}

func threadsAreIsolated(t *testing.T, s threadstore.Store, id string) {
	a, b := id+"/a", id+"/b"
	_, ta := acquire(t, s, a, "r1")
	_, tb := acquire(t, s, b, "r1")
	must(t, s.Commit(bg, a, ta, turn(1, "r1"), nil))
	if err := s.Commit(bg, b, ta, turn(1, "r1"), nil); !errors.Is(err, threadstore.ErrLeaseLost) {
		t.Fatalf("Commit to thread b with a's token = %v; want ErrLeaseLost", err)
	}
	if got := get(t, s, b); got.Turns != 0 || got.Run != "r1" || !got.Held {
		t.Fatalf("thread b after a's commit = %+v; want it unchanged", got)
	}
	must(t, s.Release(bg, b, "r1", tb))
	ev := s.Evidence()
	must(t, ev.AddUserText(bg, a, "order A-17"))
	if said, err := ev.UserSaid(bg, b, "A-17"); err != nil || said {
		t.Fatalf("thread b's evidence holds what thread a's user said (%v, %v)", said, err)
	}
}
