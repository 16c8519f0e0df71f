package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/fingerprint"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/tool"
)

// errStoreDown is the failure of the broken stores the tests use.
var errStoreDown = errors.New("store down")

// TestMain checks that no test of the package leaks a goroutine. It is the
// package's only TestMain; add package-wide setup here.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// catalogued adds t to a fresh catalog, which validates it and resolves its
// input schema, and returns it.
func catalogued(tb testing.TB, t *tool.Tool) *tool.Tool {
	tb.Helper()
	if _, err := tool.NewCatalog(t); err != nil {
		tb.Fatalf("NewCatalog(%s): %v", t.Name, err)
	}
	return t
}

// send runs one call of tl with args through handler h.
func send(tb testing.TB, h invoker.Handler, tl *tool.Tool, args string) (observation.Observation, error) {
	tb.Helper()
	return h(context.Background(), invoker.Call{ID: "c1", Name: tl.Name, Args: json.RawMessage(args), Tool: tl, Run: "run-1", Round: 1})
}

// reached is a handler that counts the calls that got through and answers
// SUCCESS with the arguments it saw.
type reached struct {
	calls int
	last  invoker.Call
}

func (r *reached) handle(_ context.Context, call invoker.Call) (observation.Observation, error) {
	r.calls++
	r.last = call
	return observation.Success("ok", call.Args), nil
}

// mustFingerprint is fingerprint.Of that fails the test on error.
func mustFingerprint(tb testing.TB, toolName, args string) string {
	tb.Helper()
	fp, err := fingerprint.Of(toolName, json.RawMessage(args))
	if err != nil {
		tb.Fatal(err)
	}
	return fp
}
