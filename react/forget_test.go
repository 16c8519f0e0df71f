package react_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// A run that ended for good leaves nothing behind in the in-memory stores
// unless the host asks to keep it; a long-running service must not grow
// with every run it ever served.
func TestRunStateForgottenWhenRunEnds(t *testing.T) {
	for _, tt := range []struct {
		name   string
		keep   bool
		final  react.Response
		status react.Status
		want   int
		reason string
	}{
		{"finished", false, turn(call("c2", "builtin_node_finish", `{"summary":"done"}`)), react.Finished, 0, "a finished run's evidence is dropped"},
		{"failed", false, turn(call("c2", "builtin_node_fail", `{"reason":"cannot"}`)), react.Failed, 0, "a failed run's evidence is dropped"},
		{"kept", true, turn(call("c2", "builtin_node_finish", `{"summary":"done"}`)), react.Finished, 1, "KeepRunState keeps it for inspection"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ledger := evidence.NewMemory()
			list := newFake("list", tool.Read, ok([]string{"a"}))
			cat := tool.MustCatalog(list.Tool)
			m := newScript(turn(call("c1", "list", `{}`)), tt.final)
			l, err := react.New(react.Config{Model: m, Tools: cat, Guards: &guard.Options{Ledger: ledger},
				KeepRunState: tt.keep, Observer: react.DiscardObserver})
			require.NoError(t, err)
			res, err := l.Run(context.Background(), react.Node{Name: "n", Tools: []string{"list"}}, "list things")
			require.NoError(t, err)
			require.Equal(t, tt.status, res.Status)
			recs, err := ledger.Records(context.Background(), res.Run)
			require.NoError(t, err)
			assert.Len(t, recs, tt.want, tt.reason)
		})
	}
}
