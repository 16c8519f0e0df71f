// Package secrettest holds, for the tests that check it, what a careless
// tool error carries and what must never reach the model: a DSN with a
// password, an access token, a file path, a goroutine stack, 10 KB of
// text, and the Go internals a model must not read either.
package secrettest

import "strings"

// The secrets careless tool errors carry.
const (
	DSN      = "postgres://app:hunter2@db.internal:5432/orders"
	Token    = "access_token=tok_5ecr3t"
	TokenURL = "https://api.example.com/v1/orders?" + Token
	Path     = "/srv/app/keys/private.pem"
	Stack    = "goroutine 7 [running]:\nmain.charge(0xc000012345)\n\t/home/dev/app/charge.go:42 +0x1d"
)

// Huge is a 10 KB error text.
var Huge = "E" + strings.Repeat("rr", 5<<10)

// Leaks returns the substrings that must never be in a model-facing text
// (the secrets' telling parts and Go internals), and more, a test's own.
func Leaks(more ...string) []string {
	return append([]string{"hunter2", "tok_5ecr3t", "db.internal", "/srv/app", "goroutine 7", "charge.go", "0xc000012345",
		"rrrrrrrrrrrrrrrrrrrr", "Go value", "Go struct", "float64", "map[", "dial tcp"}, more...)
}
