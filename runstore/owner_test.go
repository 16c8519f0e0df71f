package runstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reactguard/reactguard/runstore"
)

func TestOwnerCovers(t *testing.T) {
	acmeAlice := runstore.Owner{Tenant: "acme", User: "alice"}
	for _, tt := range []struct {
		name        string
		caller, run runstore.Owner
		want        bool
	}{
		{"the same owner", acmeAlice, acmeAlice, true},
		{"a tenant-wide caller covers its users", runstore.Owner{Tenant: "acme"}, acmeAlice, true},
		{"another user of the tenant is refused", runstore.Owner{Tenant: "acme", User: "bob"}, acmeAlice, false},
		{"the same user of another tenant is refused", runstore.Owner{Tenant: "beta", User: "alice"}, acmeAlice, false},
		{"the zero owner does not cover a tenant's run", runstore.Owner{}, acmeAlice, false},
		{"the zero owner covers runs without tenant", runstore.Owner{}, runstore.Owner{User: "dave"}, true},
		{"a tenant does not cover runs without tenant", runstore.Owner{Tenant: "acme"}, runstore.Owner{}, false},
		{"tenants compare exactly", runstore.Owner{Tenant: "Acme"}, acmeAlice, false},
		{"a user-scoped caller does not cover the tenant's unowned runs", acmeAlice, runstore.Owner{Tenant: "acme"}, false},
	} {
		if got := tt.caller.Covers(tt.run); got != tt.want {
			t.Errorf("%s: %v.Covers(%v) = %v; want %v", tt.name, tt.caller, tt.run, got, tt.want)
		}
	}
}

func TestOwnerCheck(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    runstore.Owner
		ok   bool
	}{
		{"zero", runstore.Owner{}, true},
		{"at the bound", runstore.Owner{Tenant: strings.Repeat("t", runstore.MaxOwnerPart), User: "u"}, true},
		{"tenant past the bound", runstore.Owner{Tenant: strings.Repeat("t", runstore.MaxOwnerPart+1)}, false},
		{"user not UTF-8", runstore.Owner{User: "\xc3"}, false},
	} {
		err := tt.o.Check()
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, runstore.ErrInvalidOwner)) {
			t.Errorf("%s: Check() = %v; want ok=%v", tt.name, err, tt.ok)
		}
	}
	if s := (runstore.Owner{User: "bob"}).String(); s != "-/bob" {
		t.Errorf("String() = %q; want -/bob", s)
	}
}

func TestDecisionKindText(t *testing.T) {
	for k := runstore.DecisionKind(0); k <= 4; k++ {
		b, err := k.MarshalText()
		if !k.IsValid() {
			if err == nil {
				t.Errorf("MarshalText(%d) = %s; want an error", k, b)
			}
			continue
		}
		var back runstore.DecisionKind
		if err != nil || back.UnmarshalText(b) != nil || back != k {
			t.Errorf("round trip of %v = %v, %v", k, back, err)
		}
	}
	var k runstore.DecisionKind
	if err := k.UnmarshalText([]byte("maybe")); err == nil || k != 0 {
		t.Errorf("UnmarshalText(maybe) = %v, kind %v; want an error and no change", err, k)
	}
	if s := runstore.DecisionKind(9).String(); s != "decision(9)" {
		t.Errorf("String(9) = %q", s)
	}
}
