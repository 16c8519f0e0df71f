// Package release holds no code: its tests check the repository's
// multi-module layout against the release steps of RELEASING.md, so that
// every nested module (the adapters and the stores) can be fetched by a user outside the
// repository once the tags are pushed.
//
// The tests check that every nested go.mod names its module by its
// directory (so that a tag <dir>/vX.Y.Z versions it), requires a released
// core version (never v0.0.0) — the same one in every nested module — and
// replaces only the core, only with the path to the repository root (a
// replace in a dependency's go.mod is ignored by its users, so it may serve
// local development only). TestFetchableOutsideTheRepo then publishes the
// working tree as those versions in a file-based module proxy and has a
// fresh user module `go get` each nested module, offline.
package release
