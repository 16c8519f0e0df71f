package react_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/fingerprint"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// siteBackend creates sites once per idempotency key, as a backend that
// dedupes writes does, and can lose its answer after applying one.
type siteBackend struct {
	mu       sync.Mutex
	sites    map[string]string // idempotency key → site id
	applied  int
	loseNext bool // apply, then report a timeout (the answer was lost)
	requests []tool.Request
}

func (b *siteBackend) create(ctx context.Context, name string) (string, error) {
	req, ok := tool.RequestFrom(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests = append(b.requests, req)
	if !ok || req.IdempotencyKey == "" {
		return "", tool.WithDetail(nil, "no idempotency key")
	}
	if id, ok := b.sites[req.IdempotencyKey]; ok {
		return id, nil
	}
	b.applied++
	id := "site-" + name
	b.sites[req.IdempotencyKey] = id
	if b.loseNext {
		b.loseNext = false
		return "", context.DeadlineExceeded
	}
	return id, nil
}

// verify is the tool's Verify: the backend's own record by key.
func (b *siteBackend) verify(_ context.Context, key string) (tool.WriteStatus, any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if id, ok := b.sites[key]; ok {
		return tool.WriteApplied, map[string]string{"site_id": id}, nil
	}
	return tool.WriteNotApplied, nil, nil
}

// TestTypedWriteReachesTheIdempotencyKey: a typed tool built with tool.New
// reads its call's request from its context and passes the write gate's
// idempotency key to its backend. The key is the gate's key for the run and
// the call's fingerprint, the run and call ids are the loop's, and the key
// is what makes the write exactly-once end to end: an approved write whose
// answer was lost after the backend applied it is verified by that key and
// not applied again, and a repeated call reuses the result.
func TestTypedWriteReachesTheIdempotencyKey(t *testing.T) {
	b := &siteBackend{sites: map[string]string{}, loseNext: true}
	type createIn struct {
		Name string `json:"name"`
	}
	create := tool.New("create_site", "Create a site.", func(ctx context.Context, in createIn) (map[string]string, error) {
		id, err := b.create(ctx, in.Name)
		if err != nil {
			return nil, err
		}
		return map[string]string{"site_id": id}, nil
	})
	create.Effect = tool.Write
	create.Verify = b.verify
	cat := tool.MustCatalog(create)
	guards := &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}
	const args = `{"name":"spring"}`
	cfg := react.Config{Tools: cat, Guards: guards, NewRunID: func(context.Context) string { return "run-1" }, Now: (&clock{}).now,
		Model: newScript(
			turn(call("c1", "create_site", args)),
			turn(call("c2", react.ToolApproval, `{"tool":"create_site"}`)),
		)}
	loop, err := react.New(cfg)
	require.NoError(t, err)
	node := react.Node{Tools: []string{"create_site"}}
	res, err := loop.Run(context.Background(), node, "create the spring site")
	require.NoError(t, err)
	require.Equal(t, react.Suspended, res.Status)

	cfg.Model = newScript(
		turn(call("c3", "create_site", args)), // approved: runs, applies, the answer is lost
		turn(call("c4", "create_site", args)), // uncertain: verified by key, reused
		turn(call("c5", "create_site", args)), // a third identical call: the execution and the reuse count, it trips
		turn(call("c6", react.ToolFinish, `{}`)),
	)
	loop2, err := react.New(cfg)
	require.NoError(t, err)
	res, err = loop2.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equalf(t, react.Finished, res.Status, "status = %v (%v)", res.Status, res.Failure)

	fp, err := fingerprint.Of("create_site", json.RawMessage(args))
	require.NoError(t, err)
	wantKey := guard.IdempotencyKey("run-1", fp)
	require.Lenf(t, b.requests, 1, "the backend was called %d times; want once (the verification and the reuse call nobody)", len(b.requests))
	got := b.requests[0]
	assert.Equalf(t, wantKey, got.IdempotencyKey, "the typed tool's key = %q; want the write gate's %q", got.IdempotencyKey, wantKey)
	assert.Equal(t, "run-1", got.Run, "the request carries the run id")
	assert.Equal(t, "c3", got.CallID, "the request carries the model's call id")
	assert.Equal(t, 1, got.Attempt)
	assert.JSONEq(t, args, string(got.Args))
	assert.Equal(t, 1, b.applied, "the backend applied the write once")

	lost := toolMessage(t, res.Transcript, "c3")
	assert.Containsf(t, lost.Content, "did not answer in time", "the lost answer is a timeout: %q", lost.Content)
	m := toolMessage(t, res.Transcript, "c4")
	assert.Falsef(t, m.IsError, "c4 = %q; want the verified write reused", m.Content)
	assert.Containsf(t, m.Content, "site-spring", "c4 = %q; want the backend's result", m.Content)
	m = toolMessage(t, res.Transcript, "c5")
	assert.Truef(t, m.IsError && strings.Contains(m.Content, "already called 2 times"), "c5 = %q; want FINGERPRINT_TRIP: a reuse counts as a repeat", m.Content)
}
