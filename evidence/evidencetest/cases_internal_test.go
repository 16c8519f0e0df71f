package evidencetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/reactguard/reactguard/evidence"
)

// recorder is a tester that records failures instead of failing.
type recorder struct {
	mu     sync.Mutex
	errors []string
}

type stop struct{}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(stop{})
}

func (r *recorder) Fatal(args ...any) {
	r.Errorf("%s", fmt.Sprint(args...))
	panic(stop{})
}

func (r *recorder) Skip(...any) { panic(stop{}) }

// runCase runs c against l and returns the failures it reported.
func runCase(c contractCase, l evidence.Ledger) (errs []string) {
	r := &recorder{}
	defer func() {
		if p := recover(); p != nil && p != (stop{}) {
			panic(p)
		}
		errs = r.errors
	}()
	c.run(r, l, "run")
	return r.errors
}

// forgetful accepts every record and remembers nothing.
type forgetful struct{}

func (forgetful) Append(context.Context, string, evidence.Record) error      { return nil }
func (forgetful) Records(context.Context, string) ([]evidence.Record, error) { return nil, nil }
func (forgetful) HasResult(context.Context, string, string) (bool, error)    { return false, nil }
func (forgetful) AddUserText(context.Context, string, string) error          { return nil }
func (forgetful) UserSaid(context.Context, string, string) (bool, error)     { return false, nil }
func (forgetful) Export(context.Context, string) (evidence.Snapshot, error) {
	return evidence.Snapshot{}, nil
}
func (forgetful) Import(context.Context, string, evidence.Snapshot) error { return nil }
func (forgetful) Load(context.Context, string) (evidence.Snapshot, error) {
	return evidence.Snapshot{}, nil
}
func (forgetful) HasValue(context.Context, string, string, string, string) (bool, error) {
	return false, nil
}
func (forgetful) Lookup(context.Context, string, string) (evidence.Record, bool, error) {
	return evidence.Record{}, false, nil
}
func (forgetful) Executions(context.Context, string, string) (int, evidence.Record, error) {
	return 0, evidence.Record{}, nil
}

// credulous is a Memory that answers yes to every question.
type credulous struct{ *evidence.Memory }

func (credulous) HasResult(context.Context, string, string) (bool, error) { return true, nil }
func (credulous) UserSaid(context.Context, string, string) (bool, error)  { return true, nil }
func (credulous) HasValue(context.Context, string, string, string, string) (bool, error) {
	return true, nil
}
func (c credulous) Lookup(ctx context.Context, run, id string) (evidence.Record, bool, error) {
	r, _, err := c.Memory.Lookup(ctx, run, id)
	return r, true, err
}
func (credulous) Executions(context.Context, string, string) (int, evidence.Record, error) {
	return 99, evidence.Record{CallID: "?"}, nil
}

// lastWins is a Memory that keeps the last record of a repeated attempt and
// returns records newest first.
type lastWins struct{ *evidence.Memory }

func (l lastWins) Append(ctx context.Context, run string, r evidence.Record) error {
	if err := evidence.Check(r); err != nil {
		return err
	}
	r.Attempt += 1000 // never a duplicate
	return l.Memory.Append(ctx, run, r)
}

func (l lastWins) Records(ctx context.Context, run string) ([]evidence.Record, error) {
	rs, err := l.Memory.Records(ctx, run)
	slices.Reverse(rs)
	return rs, err
}

// sloppy is a Memory that appends without checking and exports nothing.
type sloppy struct{ *evidence.Memory }

func (s sloppy) Append(ctx context.Context, run string, r evidence.Record) error {
	if evidence.Check(r) != nil {
		return nil
	}
	return s.Memory.Append(ctx, run, r)
}

func (sloppy) Import(context.Context, string, evidence.Snapshot) error { return nil }

// amnesiac is a Memory that drops every record's provenance.
type amnesiac struct{ *evidence.Memory }

func (a amnesiac) Append(ctx context.Context, run string, r evidence.Record) error {
	r.Provenance = evidence.Provenance{}
	return a.Memory.Append(ctx, run, r)
}

// TestCasesCanFail runs every contract case against broken ledgers: each
// case must catch at least one of them, and none may fail on Memory.
func TestCasesCanFail(t *testing.T) {
	broken := map[string]func() evidence.Ledger{
		"forgetful": func() evidence.Ledger { return forgetful{} },
		"credulous": func() evidence.Ledger { return credulous{evidence.NewMemory()} },
		"lastWins":  func() evidence.Ledger { return lastWins{evidence.NewMemory()} },
		"sloppy":    func() evidence.Ledger { return sloppy{evidence.NewMemory()} },
		"amnesiac":  func() evidence.Ledger { return amnesiac{evidence.NewMemory()} },
	}
	for _, c := range cases {
		if errs := runCase(c, evidence.NewMemory()); len(errs) > 0 {
			t.Errorf("%s on Memory reported %q; want no failure", c.name, errs)
		}
		caught := false
		for _, newLedger := range broken {
			if len(runCase(c, newLedger())) > 0 {
				caught = true
			}
		}
		if !caught {
			t.Errorf("%s caught none of the broken ledgers; a contract case that cannot fail proves nothing", c.name)
		}
	}
}
