package react_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// leasedClaims is a mortalClaims whose claims hold under a lease: lose
// ends the lease (every Hold context is cancelled with ErrLeaseLost), and
// takeOver gives every claim held under it to another holder, as a
// durable store does once the lease expired in the database: the first
// holder's Settle is then refused.
type leasedClaims struct {
	*mortalClaims
	mu    sync.Mutex
	lease context.Context
	end   context.CancelCauseFunc
	taken bool
	holds int
}

var _ runstore.LeasedClaims = (*leasedClaims)(nil)

func newLeasedClaims() *leasedClaims {
	c := &leasedClaims{mortalClaims: newMortalClaims()}
	c.lease, c.end = context.WithCancelCause(context.Background())
	return c
}

func (c *leasedClaims) Hold(ctx context.Context, run, id string) (context.Context, context.CancelFunc) {
	c.mu.Lock()
	c.holds++
	c.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.lease, func() { cancel(context.Cause(c.lease)) })
	return ctx, func() { stop(); cancel(context.Canceled) }
}

func (c *leasedClaims) lose() { c.end(fmt.Errorf("test: %w", runstore.ErrLeaseLost)) }

func (c *leasedClaims) takeOver() {
	c.mu.Lock()
	c.taken = true
	c.mu.Unlock()
}

func (c *leasedClaims) Settle(ctx context.Context, run, id string) error {
	c.mu.Lock()
	taken := c.taken
	c.mu.Unlock()
	if taken {
		return fmt.Errorf("test: claim %s taken over: %w", id, runstore.ErrLeaseLost)
	}
	return c.mortalClaims.Settle(ctx, run, id)
}

// A resume runs under its claim's lease. When the lease is lost during the
// resume, the model's call is cancelled with ErrLeaseLost as the cause;
// when another holder took the claim over meanwhile, the resume answers
// with the snapshot it resumed (nothing it did counts), and the write,
// which came after the loss, never ran. When nobody took the claim over,
// the resume's own result stands.
func TestResume_UnderALease(t *testing.T) {
	for _, taken := range []bool{true, false} {
		t.Run(fmt.Sprintf("taken over %v", taken), func(t *testing.T) {
			list, _, create := sitesTools()
			e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
			res := e.run(approvalNode, "create a site called blog")
			require.Equal(t, react.Suspended, res.Status)
			claims := newLeasedClaims()
			e.cfg.Claims = claims
			var cause error
			m := react.ModelFunc(func(ctx context.Context, _ react.Request) (react.Response, error) {
				claims.lose()
				if taken {
					claims.takeOver()
				}
				select {
				case <-ctx.Done():
				case <-time.After(10 * time.Second): // the lease's end never reached the model
					return react.Response{}, errors.New("test: the model's context was not cancelled")
				}
				cause = context.Cause(ctx)
				return react.Response{}, ctx.Err()
			})
			got, err := e.again(m).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
			require.ErrorIs(t, err, runstore.ErrLeaseLost)
			assert.ErrorIs(t, cause, runstore.ErrLeaseLost, "the model's context ended with the lease's cause")
			assert.Equal(t, 1, claims.holds, "the resume held its claim once")
			assert.Equal(t, 0, create.executions())
			if taken {
				assert.Equal(t, react.Suspended, got.Status, "the status of the snapshot it resumed")
				assert.Equal(t, res.Snapshot, got.Snapshot, "the snapshot it resumed, not its own")
				require.NotNil(t, got.Suspension)
				return
			}
			assert.Equal(t, react.Interrupted, got.Status, "the resume's own result stands: nobody took the claim over")
			assert.NotEqual(t, res.Snapshot, got.Snapshot)
			assert.Equal(t, "claim settle", claims.calls())
		})
	}
}
