package runstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reactguard/reactguard/runstore"
)

// A cursor continues only the listing of the filter whose page returned
// it; any other text is refused with ErrInvalidCursor, never a panic.
func FuzzFilterCursor(f *testing.F) {
	acme := runstore.Filter{Owner: &runstore.Owner{Tenant: "acme"}, Kind: runstore.Approval}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	f.Add(acme.Next(runstore.Run{ID: "r1", Stopped: t0}), "acme")
	f.Add("", "")
	f.Add("e30", "acme")
	f.Add("eyJ0IjowLCJpIjoieCIsImYiOiIifQ", "")
	f.Fuzz(func(t *testing.T, cursor, tenant string) {
		filter := runstore.Filter{Owner: &runstore.Owner{Tenant: tenant}, Kind: runstore.Approval, Cursor: cursor}
		c, ok, err := filter.After()
		switch {
		case cursor == "":
			if ok || err != nil {
				t.Fatalf("After(no cursor) = %v, %v", ok, err)
			}
		case err != nil:
			if !errors.Is(err, runstore.ErrInvalidCursor) {
				t.Fatalf("After(%q) = %v; want ErrInvalidCursor", cursor, err)
			}
		default:
			// Accepted: it must be a cursor of this very filter.
			again := filter
			again.Cursor = filter.Next(runstore.Run{ID: c.ID, Stopped: c.Stopped})
			if c2, ok2, err2 := again.After(); err2 != nil || !ok2 || c2 != c {
				t.Fatalf("a cursor accepted by %v does not round-trip: %v %v %v", filter, c2, ok2, err2)
			}
			other := filter
			other.Owner = &runstore.Owner{Tenant: tenant + "x"}
			if _, _, err := other.After(); !errors.Is(err, runstore.ErrInvalidCursor) {
				t.Fatalf("the cursor of tenant %q continued tenant %q's listing", tenant, tenant+"x")
			}
		}
	})
}
