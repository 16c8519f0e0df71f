package inbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// formKey issues and checks the anti-forgery token of a decision form. A
// token is bound to everything the form decides with: the person (owner
// and decider), the run and the ticket of the suspension shown, and the
// time it was issued. A page of another origin cannot read it, and it
// authorises nothing but that person's decision on that suspension.
type formKey struct {
	key    []byte
	maxAge time.Duration
	now    func() time.Time
}

// formPrefix names the token format.
const formPrefix = "rgf1."

// Refusals of a form token.
var (
	errFormMissing = errors.New("the form has no token")
	errFormBad     = errors.New("the form's token is not one of this inbox's")
	errFormExpired = errors.New("the form's token has expired")
)

// issue returns the token of a form deciding ticket of run for id.
func (k formKey) issue(id Identity, run, ticket string) string {
	var at [8]byte
	binary.BigEndian.PutUint64(at[:], uint64(k.now().Unix()))
	mac := k.mac(id, run, ticket, at[:])
	return formPrefix + base64.RawURLEncoding.EncodeToString(append(at[:], mac...))
}

// check reports whether token was issued by issue(id, run, ticket) and is
// not older than maxAge.
func (k formKey) check(token string, id Identity, run, ticket string) error {
	if token == "" {
		return errFormMissing
	}
	rest, ok := strings.CutPrefix(token, formPrefix)
	if !ok || len(rest) > 64 {
		return errFormBad
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(b) != 8+sha256.Size || base64.RawURLEncoding.EncodeToString(b) != rest { // one spelling per token

		return errFormBad
	}
	if !hmac.Equal(b[8:], k.mac(id, run, ticket, b[:8])) {
		return errFormBad
	}
	issued := time.Unix(int64(binary.BigEndian.Uint64(b[:8])), 0)
	now := k.now()
	if now.Sub(issued) > k.maxAge || issued.Sub(now) > time.Minute {
		return fmt.Errorf("%w (issued %s)", errFormExpired, issued.UTC().Format(time.RFC3339))
	}
	return nil
}

func (k formKey) mac(id Identity, run, ticket string, at []byte) []byte {
	h := hmac.New(sha256.New, k.key)
	for _, f := range [...]string{"reactguard inbox form", id.Owner.Tenant, id.Owner.User, id.Decider, run, ticket, string(at)} {
		_, _ = fmt.Fprintf(h, "%d:%s\x00", len(f), f) // length-prefixed: no two field lists share an encoding
	}
	return h.Sum(nil)
}
