package runstoretest

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

// RunAudit runs the [runstore.Audit] contract tests as subtests of t, each
// with an audit from newAudit.
func RunAudit(t *testing.T, newAudit func() runstore.Audit) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, a runstore.Audit, run string)
	}{
		{"RecordAndRead", auditRecordAndRead},
		{"FirstDecisionWins", auditFirstDecisionWins},
		{"RecordIsAtomic", auditRecordIsAtomic},
		{"RefusesInvalid", auditRefusesInvalid},
		{"RunsAreIsolated", auditRunsAreIsolated},
		{"KeepsBytes", auditKeepsBytes},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newAudit(), "run/"+t.Name()+"/"+nonce())
		})
	}
}

func decision(run, susp string, k runstore.DecisionKind, by string, at time.Time) runstore.Decision {
	return runstore.Decision{Run: run, Suspension: susp, Kind: k, CallID: "call-" + susp, Tool: "pay",
		Fingerprint: "fp-" + susp, Owner: runstore.Owner{Tenant: "acme", User: "alice"}, By: by, At: at, Reason: "because"}
}

// sameDecision compares two decisions, the time to the microsecond.
func sameDecision(a, b runstore.Decision) bool {
	a.At, b.At = a.At.UTC().Truncate(time.Microsecond), b.At.UTC().Truncate(time.Microsecond)
	return a == b
}

func auditRecordAndRead(t *testing.T, a runstore.Audit, run string) {
	d1 := decision(run, "s1", runstore.Approved, "alice", base)
	d2 := decision(run, "s2", runstore.Declined, "bob", base.Add(time.Minute))
	d3 := decision(run, "s3", runstore.Answered, "", base.Add(2*time.Minute))
	for _, d := range []runstore.Decision{d1, d2, d3} {
		kept, appended, err := a.Record(bg, d)
		must(t, err)
		if !appended || !sameDecision(kept, d) {
			t.Fatalf("Record(%s) = %+v, %v; want the decision appended", d.Suspension, kept, appended)
		}
	}
	got, ok, err := a.Decided(bg, run, "s2")
	must(t, err)
	if !ok || !sameDecision(got, d2) {
		t.Fatalf("Decided(s2) = %+v, %v; want %+v", got, ok, d2)
	}
	if got.At.Location() != time.UTC {
		t.Errorf("Decided(s2).At is in %v; want UTC", got.At.Location())
	}
	if _, ok, err := a.Decided(bg, run, "s9"); err != nil || ok {
		t.Fatalf("Decided(never decided) = %v, %v; want false", ok, err)
	}
	h, err := a.History(bg, run)
	must(t, err)
	if len(h) != 3 || !sameDecision(h[0], d1) || !sameDecision(h[1], d2) || !sameDecision(h[2], d3) {
		t.Fatalf("History = %+v; want the three decisions, oldest first", h)
	}
}

func auditFirstDecisionWins(t *testing.T, a runstore.Audit, run string) {
	first := decision(run, "s1", runstore.Approved, "alice", base)
	_, _, err := a.Record(bg, first)
	must(t, err)
	for _, late := range []runstore.Decision{
		decision(run, "s1", runstore.Approved, "alice", base.Add(time.Second)), // the same, delivered again
		decision(run, "s1", runstore.Declined, "bob", base.Add(time.Minute)),   // another person, the other way
	} {
		kept, appended, err := a.Record(bg, late)
		must(t, err)
		if appended || !sameDecision(kept, first) {
			t.Fatalf("Record(a second decision on s1) = %+v, %v; want the first one kept and nothing appended", kept, appended)
		}
	}
	h, err := a.History(bg, run)
	must(t, err)
	if len(h) != 1 {
		t.Fatalf("History after three Records of one suspension = %d records; want 1", len(h))
	}
}

func auditRecordIsAtomic(t *testing.T, a runstore.Audit, run string) {
	var appended atomic.Int32
	parallel(t, func(i int) error {
		kind := runstore.Approved
		if i%2 == 1 {
			kind = runstore.Declined
		}
		_, ok, err := a.Record(bg, decision(run, "s1", kind, fmt.Sprint("person-", i), base.Add(time.Duration(i)*time.Millisecond)))
		if ok {
			appended.Add(1)
		}
		return err
	})
	if n := appended.Load(); n != 1 {
		t.Fatalf("%d concurrent Records of one suspension appended %d; want exactly 1", Concurrency, n)
	}
	h, err := a.History(bg, run)
	must(t, err)
	if len(h) != 1 {
		t.Fatalf("History = %d records; want 1", len(h))
	}
}

func auditRefusesInvalid(t *testing.T, a runstore.Audit, run string) {
	ok := decision(run, "s1", runstore.Approved, "alice", base)
	for _, tt := range []struct {
		name string
		edit func(*runstore.Decision)
	}{
		{"no run", func(d *runstore.Decision) { d.Run = "" }},
		{"no suspension", func(d *runstore.Decision) { d.Suspension = "" }},
		{"no kind", func(d *runstore.Decision) { d.Kind = 0 }},
		{"undefined kind", func(d *runstore.Decision) { d.Kind = 7 }},
		{"no time", func(d *runstore.Decision) { d.At = time.Time{} }},
		{"owner not UTF-8", func(d *runstore.Decision) { d.Owner.User = "\xff" }},
	} {
		d := ok
		tt.edit(&d)
		if _, _, err := a.Record(bg, d); !errors.Is(err, runstore.ErrInvalidDecision) && !errors.Is(err, runstore.ErrInvalidOwner) {
			t.Errorf("Record(%s) = %v; want ErrInvalidDecision", tt.name, err)
		}
	}
	if h, err := a.History(bg, run); err != nil || len(h) != 0 {
		t.Errorf("History after refused Records = %v, %v; want nothing", h, err)
	}
}

func auditRunsAreIsolated(t *testing.T, a runstore.Audit, run string) {
	_, _, err := a.Record(bg, decision(run+"/a", "s1", runstore.Approved, "alice", base))
	must(t, err)
	kept, appended, err := a.Record(bg, decision(run+"/b", "s1", runstore.Declined, "bob", base))
	must(t, err)
	if !appended || kept.Kind != runstore.Declined {
		t.Fatalf("Record(another run, the same suspension id) = %+v, %v; want it appended", kept, appended)
	}
}

func auditKeepsBytes(t *testing.T, a runstore.Audit, run string) {
	d := decision(run, "s\x00ü", runstore.Declined, "ü\x00 "+strings.Repeat("b", 300), base)
	d.Reason = "no\x00 — 不要"
	d.Owner = runstore.Owner{Tenant: "租户", User: "\x00"}
	_, _, err := a.Record(bg, d)
	must(t, err)
	got, ok, err := a.Decided(bg, run, d.Suspension)
	must(t, err)
	if !ok || !sameDecision(got, d) {
		t.Fatalf("Decided after Record of NUL bytes and non-ASCII text = %+v, %v; want %+v", got, ok, d)
	}
}
