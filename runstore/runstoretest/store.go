package runstoretest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

type storeCase struct {
	name string
	run  func(t *testing.T, s runstore.Store, prefix string)
}

// RunStore runs the [runstore.Store] contract tests as subtests of t, each
// with a store from newStore.
func RunStore(t *testing.T, newStore func() runstore.Store) {
	t.Helper()
	for _, c := range storeCases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newStore(), "run/"+t.Name())
		})
	}
}

var storeCases = []storeCase{
	{"GetMissing", getMissing},
	{"SaveGetRoundTrip", saveGetRoundTrip},
	{"SaveReplaces", saveReplaces},
	{"SaveRefusesInvalid", saveRefusesInvalid},
	{"SaveCopies", saveCopies},
	{"Delete", deleteRun},
	{"ListOrderAndPages", listOrderAndPages},
	{"ListFilters", listFilters},
	{"ListDefaultLimit", listDefaultLimit},
	{"ListRefusesForeignCursor", listRefusesForeignCursor},
	{"Expire", expire},
	{"ConcurrentSaves", concurrentSaves},
	{"ListByOwner", listByOwner},
	{"CursorBoundToFilter", cursorBoundToFilter},
	{"ListSnapshots", listSnapshots},
	{"ListExactPage", listExactPage},
	{"ListRefusesOutOfRangeTimes", listRefusesOutOfRangeTimes},
	{"ListWithoutFilter", listWithoutFilter},
}

// base is the stop time of the runs of most cases: recent, with a
// sub-microsecond part that stores drop.
var base = time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)

func approvalRun(id, node string, stopped time.Time) runstore.Run {
	return runstore.Run{
		ID: id, Node: node, Kind: runstore.Approval, Owner: runstore.Owner{Tenant: "acme", User: "alice"},
		Snapshot: []byte(`{"format":"test","id":"` + id + `"}`), Stopped: stopped,
	}
}

func getMissing(t *testing.T, s runstore.Store, prefix string) {
	r, ok, err := s.Get(bg, prefix+"/missing")
	must(t, err)
	if ok {
		t.Fatalf("Get(missing) = %+v, true; want false", r)
	}
}

// sameRun compares two runs, the stop time to the microsecond.
func sameRun(a, b runstore.Run, withSnapshot bool) bool {
	same := a.ID == b.ID && a.Node == b.Node && a.Kind == b.Kind && a.Owner == b.Owner &&
		a.Stopped.Equal(b.Stopped.UTC().Truncate(time.Microsecond))
	if withSnapshot {
		same = same && bytes.Equal(a.Snapshot, b.Snapshot)
	}
	return same
}

func saveGetRoundTrip(t *testing.T, s runstore.Store, prefix string) {
	local := time.FixedZone("UTC+8", 8*3600)
	for _, r := range []runstore.Run{
		approvalRun(prefix+"/a", prefix, base.In(local)),
		{ID: prefix + "/f", Node: prefix, Kind: runstore.FollowUp, Owner: runstore.Owner{Tenant: "租户\x00", User: "ユーザー"},
			Snapshot: []byte(`{"s":"\u0000 and 日本"}`), Stopped: base.Add(time.Second)},
		{ID: prefix + "/i", Node: prefix, Kind: runstore.Interrupted, Snapshot: []byte{0xff, 0x00, 'x'}, Stopped: base.Add(2 * time.Second)},
	} {
		must(t, s.Save(bg, r))
		got, ok, err := s.Get(bg, r.ID)
		must(t, err)
		if !ok || !sameRun(got, r, true) {
			t.Fatalf("Get(%q) after Save = %+v, %v; want %+v (stop time to the microsecond)", r.ID, got, ok, r)
		}
		if got.Stopped.Location() != time.UTC {
			t.Errorf("Get(%q).Stopped is in %v; want UTC", r.ID, got.Stopped.Location())
		}
	}
}

func saveReplaces(t *testing.T, s runstore.Store, prefix string) {
	id := prefix + "/r"
	must(t, s.Save(bg, approvalRun(id, prefix, base)))
	next := runstore.Run{ID: id, Node: prefix, Kind: runstore.FollowUp, Owner: runstore.Owner{Tenant: "acme", User: "bob"},
		Snapshot: []byte(`{"second":true}`), Stopped: base.Add(time.Minute)}
	must(t, s.Save(bg, next))
	got, ok, err := s.Get(bg, id)
	must(t, err)
	if !ok || !sameRun(got, next, true) {
		t.Fatalf("Get after a second Save = %+v, %v; want the second record %+v", got, ok, next)
	}
	p, err := s.List(bg, runstore.Filter{Node: prefix})
	must(t, err)
	if len(p.Runs) != 1 {
		t.Fatalf("List after two Saves of one run = %d runs; want 1 (a run has one record)", len(p.Runs))
	}
}

func saveRefusesInvalid(t *testing.T, s runstore.Store, prefix string) {
	ok := approvalRun(prefix+"/x", prefix, base)
	for _, tt := range []struct {
		name string
		edit func(*runstore.Run)
	}{
		{"no id", func(r *runstore.Run) { r.ID = "" }},
		{"no kind", func(r *runstore.Run) { r.Kind = 0 }},
		{"undefined kind", func(r *runstore.Run) { r.Kind = 9 }},
		{"no snapshot", func(r *runstore.Run) { r.Snapshot = nil }},
		{"no stop time", func(r *runstore.Run) { r.Stopped = time.Time{} }},
		{"tenant not UTF-8", func(r *runstore.Run) { r.Owner.Tenant = "\xff" }},
		{"user too long", func(r *runstore.Run) { r.Owner.User = strings.Repeat("u", runstore.MaxOwnerPart+1) }},
	} {
		r := ok
		tt.edit(&r)
		if err := s.Save(bg, r); !errors.Is(err, runstore.ErrInvalidRun) {
			t.Errorf("Save(%s) = %v; want ErrInvalidRun", tt.name, err)
		}
	}
	if _, found, err := s.Get(bg, ok.ID); err != nil || found {
		t.Errorf("Get after refused Saves = %v, %v; want nothing stored", found, err)
	}
}

func saveCopies(t *testing.T, s runstore.Store, prefix string) {
	r := approvalRun(prefix+"/c", prefix, base)
	must(t, s.Save(bg, r))
	copy(r.Snapshot, "XXXX")
	got, _, err := s.Get(bg, r.ID)
	must(t, err)
	if !bytes.HasPrefix(got.Snapshot, []byte(`{"fo`)) {
		t.Fatalf("Get after the caller changed its slice = %s; want the saved bytes (the store must not alias)", got.Snapshot)
	}
	copy(got.Snapshot, "ZZZZ")
	again, _, err := s.Get(bg, r.ID)
	must(t, err)
	if !bytes.HasPrefix(again.Snapshot, []byte(`{"fo`)) {
		t.Fatalf("Get after the caller changed a returned slice = %s; want the saved bytes", again.Snapshot)
	}
}

func deleteRun(t *testing.T, s runstore.Store, prefix string) {
	id := prefix + "/d"
	must(t, s.Save(bg, approvalRun(id, prefix, base)))
	must(t, s.Delete(bg, id))
	if _, ok, err := s.Get(bg, id); err != nil || ok {
		t.Fatalf("Get after Delete = %v, %v; want nothing", ok, err)
	}
	must(t, s.Delete(bg, id)) // deleting a missing run is a no-op
}

// ids returns the ids of a page's runs, without their prefix.
func ids(p runstore.Page, prefix string) []string {
	out := make([]string, len(p.Runs))
	for i, r := range p.Runs {
		out[i] = strings.TrimPrefix(r.ID, prefix+"/")
	}
	return out
}

func listOrderAndPages(t *testing.T, s runstore.Store, prefix string) {
	// Seven runs saved out of order; b1 and b2 stopped in the same
	// microsecond, so the id breaks the tie.
	stops := map[string]time.Duration{"e": 5, "a": 0, "c": 2, "b2": 1, "g": 7, "b1": 1, "f": 6}
	for id, d := range stops {
		must(t, s.Save(bg, approvalRun(prefix+"/"+id, prefix, base.Add(d*time.Second))))
	}
	var all []string
	f := runstore.Filter{Node: prefix, Limit: 3}
	for page := 1; ; page++ {
		p, err := s.List(bg, f)
		must(t, err)
		for _, r := range p.Runs {
			if r.Snapshot != nil {
				t.Fatalf("List returned the snapshot of %q; want nil (Get returns it)", r.ID)
			}
			if r.Owner != (runstore.Owner{Tenant: "acme", User: "alice"}) || r.Kind != runstore.Approval || r.Node != prefix {
				t.Fatalf("List returned %+v; want the listing fields (owner, kind, node)", r)
			}
		}
		all = append(all, ids(p, prefix)...)
		if len(p.Runs) > 3 {
			t.Fatalf("page %d has %d runs; want at most the limit 3", page, len(p.Runs))
		}
		if p.Next == "" {
			break
		}
		if page > 5 {
			t.Fatalf("List did not end after %d pages; ids so far %v", page, all)
		}
		f.Cursor = p.Next
	}
	want := []string{"a", "b1", "b2", "c", "e", "f", "g"}
	if !slices.Equal(all, want) {
		t.Fatalf("List pages = %v; want %v (oldest first, ties by id, each run once)", all, want)
	}
}

func listFilters(t *testing.T, s runstore.Store, prefix string) {
	other := prefix + "/other-node"
	runs := []runstore.Run{
		approvalRun(prefix+"/a1", prefix, base),
		approvalRun(prefix+"/a2", prefix, base.Add(time.Hour)),
		{ID: prefix + "/f1", Node: prefix, Kind: runstore.FollowUp, Snapshot: []byte("{}"), Stopped: base.Add(2 * time.Hour)},
		{ID: prefix + "/i1", Node: prefix, Kind: runstore.Interrupted, Snapshot: []byte("{}"), Stopped: base.Add(3 * time.Hour)},
		approvalRun(prefix+"/o1", other, base.Add(time.Hour)),
	}
	for _, r := range runs {
		must(t, s.Save(bg, r))
	}
	for _, tt := range []struct {
		name string
		f    runstore.Filter
		want []string
	}{
		{"node", runstore.Filter{Node: prefix}, []string{"a1", "a2", "f1", "i1"}},
		{"other node", runstore.Filter{Node: other}, []string{"o1"}},
		{"approvals of the node", runstore.Filter{Node: prefix, Kind: runstore.Approval}, []string{"a1", "a2"}},
		{"follow-ups", runstore.Filter{Node: prefix, Kind: runstore.FollowUp}, []string{"f1"}},
		{"interrupted", runstore.Filter{Node: prefix, Kind: runstore.Interrupted}, []string{"i1"}},
		{"stopped before", runstore.Filter{Node: prefix, StoppedBefore: base.Add(2 * time.Hour)}, []string{"a1", "a2"}},
		{"stopped after (inclusive)", runstore.Filter{Node: prefix, StoppedAfter: base.Add(2 * time.Hour)}, []string{"f1", "i1"}},
		{"window", runstore.Filter{Node: prefix, StoppedAfter: base.Add(time.Hour), StoppedBefore: base.Add(3 * time.Hour)}, []string{"a2", "f1"}},
		{"nothing", runstore.Filter{Node: prefix, Kind: runstore.FollowUp, StoppedBefore: base}, []string{}},
	} {
		p, err := s.List(bg, tt.f)
		must(t, err)
		got := ids(p, prefix)
		if tt.f.Node == other {
			got = ids(p, other)
			want := []string{"o1"}
			if len(p.Runs) != 1 || p.Runs[0].ID != prefix+"/o1" {
				t.Errorf("List(%s) = %v; want %v", tt.name, got, want)
			}
			continue
		}
		if !slices.Equal(got, tt.want) || p.Next != "" {
			t.Errorf("List(%s) = %v, next %q; want %v and no next page", tt.name, got, p.Next, tt.want)
		}
	}
}

func listDefaultLimit(t *testing.T, s runstore.Store, prefix string) {
	n := runstore.DefaultLimit + 5
	for i := range n {
		must(t, s.Save(bg, approvalRun(fmt.Sprintf("%s/%03d", prefix, i), prefix, base.Add(time.Duration(i)*time.Millisecond))))
	}
	p, err := s.List(bg, runstore.Filter{Node: prefix})
	must(t, err)
	if len(p.Runs) != runstore.DefaultLimit || p.Next == "" {
		t.Fatalf("List without a limit = %d runs, next %q; want %d and a next page", len(p.Runs), p.Next, runstore.DefaultLimit)
	}
	p, err = s.List(bg, runstore.Filter{Node: prefix, Cursor: p.Next, Limit: runstore.MaxLimit + 1})
	must(t, err)
	if len(p.Runs) != 5 || p.Next != "" {
		t.Fatalf("second page = %d runs, next %q; want the last 5 and no next page", len(p.Runs), p.Next)
	}
}

func listRefusesForeignCursor(t *testing.T, s runstore.Store, prefix string) {
	must(t, s.Save(bg, approvalRun(prefix+"/a", prefix, base)))
	for _, c := range []string{"not a cursor", "%%%", "e30"} { // e30 is base64 of {}
		if _, err := s.List(bg, runstore.Filter{Node: prefix, Cursor: c}); !errors.Is(err, runstore.ErrInvalidCursor) {
			t.Errorf("List(cursor %q) = %v; want ErrInvalidCursor", c, err)
		}
	}
}

func expire(t *testing.T, s runstore.Store, prefix string) {
	old := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, d := range []time.Duration{0, time.Hour, 48 * time.Hour} {
		must(t, s.Save(bg, approvalRun(fmt.Sprintf("%s/%d", prefix, i), prefix, old.Add(d))))
	}
	n, err := s.Expire(bg, old.Add(2*time.Hour))
	must(t, err)
	if n != 2 {
		t.Fatalf("Expire(before two of three runs) = %d; want 2", n)
	}
	p, err := s.List(bg, runstore.Filter{Node: prefix})
	must(t, err)
	if got := ids(p, prefix); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("List after Expire = %v; want [2] (the run that stopped after the bound)", got)
	}
}

func concurrentSaves(t *testing.T, s runstore.Store, prefix string) {
	parallel(t, func(i int) error {
		id := fmt.Sprintf("%s/%02d", prefix, i%8) // eight runs, each saved by several goroutines
		return s.Save(bg, approvalRun(id, prefix, base.Add(time.Duration(i)*time.Second)))
	})
	p, err := s.List(bg, runstore.Filter{Node: prefix})
	must(t, err)
	if len(p.Runs) != 8 {
		t.Fatalf("List after concurrent saves of 8 runs = %d runs; want 8", len(p.Runs))
	}
}

func ownedRun(id, node, tenant, user string, stopped time.Time) runstore.Run {
	r := approvalRun(id, node, stopped)
	r.Owner = runstore.Owner{Tenant: tenant, User: user}
	return r
}

func listByOwner(t *testing.T, s runstore.Store, prefix string) {
	for _, r := range []runstore.Run{
		ownedRun(prefix+"/a-alice", prefix, "acme", "alice", base),
		ownedRun(prefix+"/a-bob", prefix, "acme", "bob", base.Add(time.Second)),
		ownedRun(prefix+"/b-carol", prefix, "beta", "carol", base.Add(2*time.Second)),
		ownedRun(prefix+"/none", prefix, "", "", base.Add(3*time.Second)),
		ownedRun(prefix+"/none-dave", prefix, "", "dave", base.Add(4*time.Second)),
		ownedRun(prefix+"/acme-like", prefix, "acme ", "alice", base.Add(5*time.Second)),
	} {
		must(t, s.Save(bg, r))
	}
	for _, tt := range []struct {
		name  string
		owner *runstore.Owner
		want  []string
	}{
		{"every owner (nil)", nil, []string{"a-alice", "a-bob", "b-carol", "none", "none-dave", "acme-like"}},
		{"a tenant covers its users", &runstore.Owner{Tenant: "acme"}, []string{"a-alice", "a-bob"}},
		{"a user covers only their runs", &runstore.Owner{Tenant: "acme", User: "bob"}, []string{"a-bob"}},
		{"another tenant's user sees nothing of acme", &runstore.Owner{Tenant: "beta", User: "alice"}, []string{}},
		{"the zero owner covers the runs without tenant", &runstore.Owner{}, []string{"none", "none-dave"}},
		{"a user without tenant", &runstore.Owner{User: "dave"}, []string{"none-dave"}},
		{"tenants compare exactly (no trimming)", &runstore.Owner{Tenant: "acme "}, []string{"acme-like"}},
	} {
		p, err := s.List(bg, runstore.Filter{Node: prefix, Owner: tt.owner})
		must(t, err)
		if got := ids(p, prefix); !slices.Equal(got, tt.want) {
			t.Errorf("List(%s) = %v; want %v", tt.name, got, tt.want)
		}
	}
}

func cursorBoundToFilter(t *testing.T, s runstore.Store, prefix string) {
	for i := range 4 {
		must(t, s.Save(bg, ownedRun(fmt.Sprintf("%s/a%d", prefix, i), prefix, "acme", "alice", base.Add(time.Duration(i)*time.Second))))
		must(t, s.Save(bg, ownedRun(fmt.Sprintf("%s/b%d", prefix, i), prefix, "beta", "bob", base.Add(time.Duration(i)*time.Second))))
	}
	acme := runstore.Filter{Node: prefix, Owner: &runstore.Owner{Tenant: "acme"}, Limit: 2}
	p, err := s.List(bg, acme)
	must(t, err)
	if p.Next == "" {
		t.Fatal("first page of 4 runs with limit 2 has no next cursor")
	}
	for _, tt := range []struct {
		name string
		f    runstore.Filter
	}{
		{"another tenant", runstore.Filter{Node: prefix, Owner: &runstore.Owner{Tenant: "beta"}, Limit: 2}},
		{"every owner", runstore.Filter{Node: prefix, Limit: 2}},
		{"another user of the tenant", runstore.Filter{Node: prefix, Owner: &runstore.Owner{Tenant: "acme", User: "x"}, Limit: 2}},
		{"another node", runstore.Filter{Node: prefix + "/x", Owner: &runstore.Owner{Tenant: "acme"}, Limit: 2}},
		{"another kind", runstore.Filter{Node: prefix, Owner: &runstore.Owner{Tenant: "acme"}, Kind: runstore.FollowUp, Limit: 2}},
		{"another time window", runstore.Filter{Node: prefix, Owner: &runstore.Owner{Tenant: "acme"}, StoppedAfter: base, Limit: 2}},
	} {
		tt.f.Cursor = p.Next
		if got, err := s.List(bg, tt.f); !errors.Is(err, runstore.ErrInvalidCursor) {
			t.Errorf("List(%s, acme's cursor) = %v, %v; want ErrInvalidCursor (a cursor is bound to its filter)", tt.name, ids(got, prefix), err)
		}
	}
	same := acme
	same.Cursor, same.Limit, same.Snapshots = p.Next, 10, true // the page size and snapshots are not part of the binding
	p2, err := s.List(bg, same)
	must(t, err)
	if got := ids(p2, prefix); !slices.Equal(got, []string{"a2", "a3"}) {
		t.Fatalf("List(acme, its own cursor) = %v; want [a2 a3]", got)
	}
}

func listSnapshots(t *testing.T, s runstore.Store, prefix string) {
	r := approvalRun(prefix+"/s", prefix, base)
	must(t, s.Save(bg, r))
	p, err := s.List(bg, runstore.Filter{Node: prefix, Snapshots: true})
	must(t, err)
	if len(p.Runs) != 1 || !bytes.Equal(p.Runs[0].Snapshot, r.Snapshot) {
		t.Fatalf("List(Snapshots) = %+v; want the run with its snapshot %s", p.Runs, r.Snapshot)
	}
	p.Runs[0].Snapshot[0] = 'X'
	again, _, err := s.Get(bg, r.ID)
	must(t, err)
	if !bytes.Equal(again.Snapshot, r.Snapshot) {
		t.Fatalf("Get after the caller changed a listed snapshot = %s; want the saved bytes", again.Snapshot)
	}
}

func listRefusesOutOfRangeTimes(t *testing.T, s runstore.Store, prefix string) {
	must(t, s.Save(bg, approvalRun(prefix+"/a", prefix, base)))
	bc := time.Date(-4800, 1, 1, 0, 0, 0, 0, time.UTC)
	far := time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		f    runstore.Filter
		want error
	}{
		{"StoppedAfter before 4713 BC", runstore.Filter{Node: prefix, StoppedAfter: bc}, runstore.ErrInvalidFilter},
		{"StoppedBefore past year 294276", runstore.Filter{Node: prefix, StoppedBefore: far}, runstore.ErrInvalidFilter},
		{"a cursor at 4800 BC", runstore.Filter{Node: prefix, Cursor: cursorAt(runstore.Filter{Node: prefix}, bc)}, runstore.ErrInvalidCursor},
	} {
		if _, err := s.List(bg, tt.f); !errors.Is(err, tt.want) {
			t.Errorf("List(%s) = %v; want %v (refused clearly, never a database error)", tt.name, err, tt.want)
		}
	}
	p, err := s.List(bg, runstore.Filter{Node: prefix, StoppedAfter: runstore.MinTime, StoppedBefore: runstore.MaxTime})
	must(t, err)
	if len(p.Runs) != 1 {
		t.Fatalf("List(the widest window) = %d runs; want 1", len(p.Runs))
	}
}

// cursorAt returns a cursor of f positioned at t, as a forged one would be.
func cursorAt(f runstore.Filter, t time.Time) string {
	return f.Next(runstore.Run{ID: "x", Stopped: t})
}

// A page that holds the last runs exactly has no next cursor: a next page
// would be empty.
func listExactPage(t *testing.T, s runstore.Store, prefix string) {
	for i := range 3 {
		must(t, s.Save(bg, approvalRun(fmt.Sprintf("%s/%d", prefix, i), prefix, base.Add(time.Duration(i)*time.Second))))
	}
	p, err := s.List(bg, runstore.Filter{Node: prefix, Limit: 3})
	must(t, err)
	if len(p.Runs) != 3 || p.Next != "" {
		t.Fatalf("List(3 runs, limit 3) = %d runs, next %q; want 3 and no next page", len(p.Runs), p.Next)
	}
}

// listWithoutFilter lists every run of the store, as an operator's tool
// does: an empty filter is a valid one, and its pages hold each run once,
// oldest first, ties by id. The store may hold runs of other tests: the
// case checks its own runs among them.
func listWithoutFilter(t *testing.T, s runstore.Store, prefix string) {
	mine := map[string]int{}
	for i, id := range []string{"b", "a", "c"} {
		must(t, s.Save(bg, approvalRun(prefix+"/"+id, prefix, base.Add(time.Duration(i%2)*time.Second))))
		mine[prefix+"/"+id] = 0
	}
	var last runstore.Run
	f := runstore.Filter{Limit: runstore.MaxLimit}
	for page := 1; ; page++ {
		p, err := s.List(bg, f)
		if err != nil {
			t.Fatalf("List(no filter), page %d = %v; want every run of the store", page, err)
		}
		for i, r := range p.Runs {
			if (page > 1 || i > 0) && (r.Stopped.Before(last.Stopped) || r.Stopped.Equal(last.Stopped) && r.ID <= last.ID) {
				t.Fatalf("List(no filter) gave %q (%v) after %q (%v); want oldest first, ties by id", r.ID, r.Stopped, last.ID, last.Stopped)
			}
			last = r
			if _, ok := mine[r.ID]; ok {
				mine[r.ID]++
			}
		}
		if p.Next == "" {
			break
		}
		if page > 1000 {
			t.Fatalf("List(no filter) did not end after %d pages", page)
		}
		f.Cursor = p.Next
	}
	for id, n := range mine {
		if n != 1 {
			t.Errorf("List(no filter) gave %q %d times; want once", id, n)
		}
	}
}
