package threadstore

import (
	"context"
	"strings"

	"github.com/reactguard/reactguard/evidence"
)

// KeyPrefix starts the key under which [EvidenceIn] keeps a thread's
// evidence in a ledger of runs. It begins with the byte 0xFF, which no
// valid UTF-8 text holds, so no run id (react refuses run ids that are not
// valid UTF-8) can be a thread's key, and in a store that compares keys
// byte for byte every thread key sorts after every run id.
const KeyPrefix = "\xffthread:"

// Key returns the key of thread id's evidence in a ledger of runs.
func Key(id string) string { return KeyPrefix + id }

// IsKey reports whether a ledger key is a thread's (see [Key]).
func IsKey(key string) bool { return strings.HasPrefix(key, KeyPrefix) }

// EvidenceIn returns an [evidence.Ledger] keyed by thread id that keeps
// every thread's evidence in l, a ledger of runs, under [Key](id): a
// durable store keeps its threads' evidence in its own evidence tables,
// with their indexes, this way. Pruning the runs' evidence by age must
// leave the thread keys alone (see [IsKey]); deleting a thread deletes
// them. The ledger is safe for concurrent use when l is.
func EvidenceIn(l evidence.Ledger) evidence.Ledger { return keyed{l} }

type keyed struct{ l evidence.Ledger }

// Append appends to thread id's evidence.
func (k keyed) Append(ctx context.Context, id string, r evidence.Record) error {
	return k.l.Append(ctx, Key(id), r)
}

// Records returns thread id's records.
func (k keyed) Records(ctx context.Context, id string) ([]evidence.Record, error) {
	return k.l.Records(ctx, Key(id))
}

// Lookup looks a call up in thread id's evidence.
func (k keyed) Lookup(ctx context.Context, id, callID string) (evidence.Record, bool, error) {
	return k.l.Lookup(ctx, Key(id), callID)
}

// HasResult reports whether thread id's evidence has a result of tool.
func (k keyed) HasResult(ctx context.Context, id, tool string) (bool, error) {
	return k.l.HasResult(ctx, Key(id), tool)
}

// HasValue reports whether a result in thread id's evidence holds value.
func (k keyed) HasValue(ctx context.Context, id, tool, field, value string) (bool, error) {
	return k.l.HasValue(ctx, Key(id), tool, field, value)
}

// Executions counts the calls of fingerprint in thread id's evidence.
func (k keyed) Executions(ctx context.Context, id, fingerprint string) (int, evidence.Record, error) {
	return k.l.Executions(ctx, Key(id), fingerprint)
}

// AddUserText adds the user's words to thread id's evidence.
func (k keyed) AddUserText(ctx context.Context, id, text string) error {
	return k.l.AddUserText(ctx, Key(id), text)
}

// UserSaid reports whether the user said value in thread id.
func (k keyed) UserSaid(ctx context.Context, id, value string) (bool, error) {
	return k.l.UserSaid(ctx, Key(id), value)
}
