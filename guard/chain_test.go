package guard_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

type chSite struct {
	Name string `json:"name"`
}

// chTools returns a read tool and a write tool in one catalog; the write
// answers with result (nil: success).
func chTools(t *testing.T, writeErr func() error) (*tool.Tool, *tool.Tool, *int) {
	t.Helper()
	var writes int
	list := tool.New("list_sites", "lists sites", func(context.Context, struct{}) ([]chSite, error) {
		return []chSite{{Name: "blog"}}, nil
	})
	list.Effect = tool.Read
	create := tool.New("create_site", "creates a site", func(_ context.Context, in chSite) (chSite, error) {
		writes++
		if writeErr != nil {
			if err := writeErr(); err != nil {
				return chSite{}, err
			}
		}
		return in, nil
	})
	create.Effect = tool.Write
	_, err := tool.NewCatalog(list, create)
	require.NoError(t, err)
	return list, create, &writes
}

func chSend(t *testing.T, h invoker.Handler, id string, tl *tool.Tool, args string) (obsOut struct {
	o    outcome.Outcome
	code errcode.Code
	next string
}) {
	t.Helper()
	obs, err := h(context.Background(), invoker.Call{ID: id, Name: tl.Name, Args: json.RawMessage(args), Tool: tl, Run: "run-1", Round: 1})
	require.NoError(t, err)
	obsOut.o, obsOut.code, obsOut.next = obs.Outcome(), obs.Code(), obs.Next()
	return obsOut
}

func TestDefault_Order(t *testing.T) {
	list, _, _ := chTools(t, nil)
	var trace []string
	ics := guard.Default(nil)
	require.Len(t, ics, len(defaultNames))
	h := invoker.Chain(invoker.New(nil), traced(func(s string) { trace = append(trace, s) }, ics, defaultNames)...)
	chSend(t, h, "c1", list, `{}`)
	require.Len(t, trace, 2*len(defaultNames))
	for i, name := range defaultNames {
		assert.Contains(t, trace[i], "enter "+name, "layer %d entered is %q; want %s", i, trace[i], name)
		assert.Contains(t, trace[len(trace)-1-i], "leave "+name, "layer %d from the end left is %q; want %s", i, trace[len(trace)-1-i], name)
	}
}

func TestDefault_FillsStoresBack(t *testing.T) {
	var opts guard.Options
	guard.Default(&opts)
	assert.IsType(t, &evidence.Memory{}, opts.Ledger, "a nil Ledger becomes an in-memory ledger, stored back")
	assert.IsType(t, &guard.MemoryApprovals{}, opts.Approvals)
	assert.IsType(t, &guard.MemoryWriteLedger{}, opts.WriteLedger)

	ledger, approvals, writes := evidence.NewMemory(), guard.NewMemoryApprovals(), guard.NewMemoryWriteLedger()
	given := guard.Options{Ledger: ledger, Approvals: approvals, WriteLedger: writes}
	guard.Default(&given)
	assert.Same(t, ledger, given.Ledger, "given stores are kept")
	assert.Same(t, approvals, given.Approvals)
	assert.Same(t, writes, given.WriteLedger)
}

func TestDefault_ApprovalFlowThroughSharedStores(t *testing.T) {
	list, create, writes := chTools(t, nil)
	var opts guard.Options
	h := invoker.Chain(invoker.New(nil), guard.Default(&opts)...)

	assert.Equal(t, outcome.Success, chSend(t, h, "c1", list, `{}`).o, "a read runs")
	recs, err := opts.Ledger.Records(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Len(t, recs, 1, "and is recorded in the ledger stored back into the options")

	assert.Equal(t, errcode.ApprovalRequired, chSend(t, h, "c2", create, `{"name":"shop"}`).code)
	gc, ok, err := opts.Approvals.Gated(context.Background(), "run-1")
	require.NoError(t, err)
	require.True(t, ok, "the loop finds the gated call in the shared Approvals")
	require.NoError(t, opts.Approvals.Approve(context.Background(), "run-1", gc.CallID, gc.Fingerprint))

	assert.Equal(t, outcome.Success, chSend(t, h, "c2", create, `{"name":"shop"}`).o, "the approved write runs")
	assert.Equal(t, outcome.Success, chSend(t, h, "c3", create, `{ "name": "shop" }`).o, "the same write again is reused")
	assert.Equal(t, 1, *writes)
}

func TestDefault_ApprovedBusinessFailure(t *testing.T) {
	// Acceptance §9 #11: after approval the write fails on the business
	// side; the next step is to tell the user, not to try another write.
	_, create, _ := chTools(t, func() error { return tool.BusinessFailure("system.50001", "quota exceeded") })
	var opts guard.Options
	h := invoker.Chain(invoker.New(nil), guard.Default(&opts)...)
	chSend(t, h, "c1", create, `{"name":"shop"}`)
	gc, _, _ := opts.Approvals.Gated(context.Background(), "run-1")
	require.NoError(t, opts.Approvals.Approve(context.Background(), "run-1", gc.CallID, gc.Fingerprint))
	got := chSend(t, h, "c1", create, `{"name":"shop"}`)
	assert.Equal(t, outcome.Failed, got.o)
	assert.Equal(t, errcode.ToolBusinessFailed, got.code)
	assert.Equal(t, prompt.Default().Text(prompt.NextApprovedFailed, "tool", "create_site"), got.next)
}

func TestDefault_OptionsReachTheGuards(t *testing.T) {
	list, create, writes := chTools(t, nil)
	zh := prompt.For(prompt.Chinese)
	opts := guard.Options{
		Catalog:          zh,
		FingerprintLimit: 1,
		RequireApproval:  func(invoker.Call) bool { return false },
		ArgPolicy: func(_ context.Context, _ invoker.Call, args map[string]any) error {
			if args["name"] == "forbidden" {
				return &guard.ArgError{Field: "name", Detail: "reserved"}
			}
			return nil
		},
		Retry: guard.RetryOptions{Sleep: func(context.Context, time.Duration) error { return nil }, Rand: rand.New(rand.NewPCG(1, 1))},
	}
	h := invoker.Chain(invoker.New(nil), guard.Default(&opts)...)

	assert.Equal(t, outcome.Success, chSend(t, h, "c1", list, `{}`).o)
	got := chSend(t, h, "c2", list, `{}`)
	assert.Equal(t, errcode.FingerprintTrip, got.code, "FingerprintLimit 1 reaches the fingerprint guard")
	assert.Equal(t, zh.Text(prompt.NextFingerprint, "tool", "list_sites"), got.next, "the catalog reaches the guards")

	assert.Equal(t, errcode.ArgRejected, chSend(t, h, "c3", create, `{"name":"forbidden"}`).code, "ArgPolicy reaches the arg policy")
	assert.Equal(t, outcome.Success, chSend(t, h, "c4", create, `{"name":"shop"}`).o, "RequireApproval reaches the write gate")
	assert.Equal(t, 1, *writes)
}
