package runstore

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxOwnerPart bounds the length in bytes of an [Owner]'s Tenant and User.
const MaxOwnerPart = 256

// Owner is who a run belongs to: a tenant (a customer, an organisation)
// and a user of that tenant. The host names it when it starts a run; the
// loop seals it into every snapshot of the run, and refuses to show or
// resume the run for anyone it does not cover ([Owner.Covers]). The zero
// Owner is the owner of runs started without one (a service with a single
// tenant and no users).
type Owner struct {
	// Tenant is the tenant's id; "" is the one tenant of a service
	// without tenants.
	Tenant string `json:"tenant,omitempty"`
	// User is the id of the user who started the run; "" when the host
	// does not track users.
	User string `json:"user,omitempty"`
}

// ErrInvalidOwner is wrapped by the error of [Owner.Check].
var ErrInvalidOwner = errors.New("runstore: invalid owner")

// Check reports whether o can be stored: each part is valid UTF-8 of at
// most MaxOwnerPart bytes. A User without a Tenant is allowed (a service
// without tenants may still name its users).
func (o Owner) Check() error {
	for _, p := range [...]struct{ name, v string }{{"tenant", o.Tenant}, {"user", o.User}} {
		switch {
		case !utf8.ValidString(p.v):
			return fmt.Errorf("%w: the %s is not valid UTF-8", ErrInvalidOwner, p.name)
		case len(p.v) > MaxOwnerPart:
			return fmt.Errorf("%w: the %s has %d bytes; at most %d", ErrInvalidOwner, p.name, len(p.v), MaxOwnerPart)
		}
	}
	return nil
}

// Covers reports whether a caller acting as o may see and decide the runs
// of owner run: the tenants must be equal, and so must the users unless
// o.User is "" (the caller acts for every user of its tenant: a tenant's
// administrator, an approvals team). So Owner{Tenant: "acme"} covers every
// run of acme, Owner{Tenant: "acme", User: "bob"} only bob's, and the zero
// Owner only the runs of the tenant "" (those started without a tenant).
func (o Owner) Covers(run Owner) bool {
	return o.Tenant == run.Tenant && (o.User == "" || o.User == run.User)
}

// String returns "tenant/user" for logs, with "-" for an empty part.
func (o Owner) String() string {
	t, u := o.Tenant, o.User
	if t == "" {
		t = "-"
	}
	if u == "" {
		u = "-"
	}
	return t + "/" + u
}
