package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/stores/postgres"
)

// A run's last write time (what Prune ages its evidence by) moves in steps
// of ten seconds: an append moves it when it is more than ten seconds old,
// whether this Store or another moved it last, and an append within ten
// seconds of this Store's own move leaves it; the write ledger's record
// with its evidence (FinishRecorded) moves it the same way; a Prune that
// deleted the run's evidence makes the next append write the time again,
// however soon; the record of a fenced write moves nothing.
func TestEvidence_LastWriteTimeSteps(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := start
	s := open(t, &postgres.Options{Now: func() time.Time { return now }})
	other := open(t, &postgres.Options{Now: func() time.Time { return now }})
	ev := s.Evidence()
	run := "touch/" + t.Name()
	n := 0
	appendAt := func(st *postgres.Store, d time.Duration) {
		t.Helper()
		now = start.Add(d)
		n++
		r := evidence.Record{CallID: "c" + string(rune('a'+n)), Tool: "get", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":"1"}`)}
		if err := st.Evidence().Append(bg, run, r); err != nil {
			t.Fatal(err)
		}
	}
	lastWrite := func() (time.Time, bool) {
		t.Helper()
		var at time.Time
		err := s.Pool().QueryRow(bg, `SELECT at FROM reactguard_evidence_runs WHERE run = $1`, []byte(run)).Scan(&at)
		if err != nil {
			return time.Time{}, false
		}
		return at.UTC(), true
	}
	want := func(why string, d time.Duration) {
		t.Helper()
		at, ok := lastWrite()
		if !ok || !at.Equal(start.Add(d)) {
			t.Fatalf("%s: last write time = %v (found %v); want %v", why, at, ok, start.Add(d))
		}
	}
	appendAt(s, 0)
	want("the first append writes it", 0)
	appendAt(s, 4*time.Second)
	want("an append 4 s after this store's move leaves it", 0)
	appendAt(s, 10*time.Second)
	want("an append exactly 10 s after leaves it", 0)
	appendAt(s, 11*time.Second)
	want("an append 11 s after moves it", 11*time.Second)
	appendAt(other, 25*time.Second)
	want("another store's append 14 s after moves it", 25*time.Second)
	appendAt(s, 30*time.Second)
	want("an append 5 s after the other store's move leaves it (the database says so)", 25*time.Second)
	appendAt(s, 35*time.Second)
	want("an append exactly 10 s after the other store's move leaves it (the database says so)", 25*time.Second)
	appendAt(s, 36*time.Second)
	want("an append 11 s after the other store's move moves it", 36*time.Second)

	// The write ledger's record with its evidence moves it the same way.
	var wl guard.RecordingWriteLedger = s.WriteLedger()
	finishAt := func(d time.Duration, key string) {
		t.Helper()
		now = start.Add(d)
		rec, ok, err := s.WriteLedger().Begin(bg, run+key, "put")
		if err != nil || !ok {
			t.Fatalf("Begin = %v, %v", ok, err)
		}
		rec.State, rec.Result = guard.WriteSucceeded, []byte(`{"ok":true}`)
		if err := wl.FinishRecorded(bg, rec, run, evidence.Record{CallID: key, Tool: "put", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"ok":true}`)}); err != nil {
			t.Fatal(err)
		}
	}
	finishAt(40*time.Second, "w1")
	want("a write's record 4 s after leaves it", 36*time.Second)
	finishAt(47*time.Second, "w2")
	want("a write's record 11 s after moves it", 47*time.Second)

	// Pruned (the bound after its last write time): the next append, 2 s
	// after this store last moved it, writes it again.
	now = start.Add(48 * time.Second)
	if _, err := s.Prune(bg, start.Add(48*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, ok := lastWrite(); ok {
		t.Fatal("the run's last write time survived a Prune whose bound is after it")
	}
	appendAt(s, 49*time.Second)
	want("the first append after a Prune writes it again", 49*time.Second)
	if recs, err := ev.Records(bg, run); err != nil || len(recs) != 1 {
		t.Fatalf("records after the Prune and one append = %d, %v; want 1", len(recs), err)
	}

	// A record whose write is fenced (its claim is no longer the key's
	// current one) is not stored, and does not move the time either, 12 s
	// after the last move.
	key := run + "fenced"
	early, ok, err := s.WriteLedger().Begin(bg, key, "put")
	if err != nil || !ok {
		t.Fatalf("Begin = %v, %v", ok, err)
	}
	if err := s.WriteLedger().Finish(bg, guard.WriteRecord{Key: key, Tool: "put", State: guard.WriteFailed, Token: early.Token}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.WriteLedger().Begin(bg, key, "put"); err != nil || !ok {
		t.Fatalf("Begin again after a failure = %v, %v", ok, err)
	}
	now = start.Add(61 * time.Second)
	early.State, early.Result = guard.WriteSucceeded, []byte(`{"ok":true}`)
	err = wl.FinishRecorded(bg, early, run, evidence.Record{CallID: "fenced", Tool: "put", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"ok":true}`)})
	if !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("FinishRecorded of an earlier claim = %v; want ErrFenced", err)
	}
	want("a fenced write's record 12 s after leaves it", 49*time.Second)
	if recs, err := ev.Records(bg, run); err != nil || len(recs) != 1 {
		t.Fatalf("records after a fenced write's record = %d, %v; want 1 (it is not stored)", len(recs), err)
	}
}
