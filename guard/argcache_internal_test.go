package guard

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

// cacheTool is a read tool taking {"n": integer ≥ 1}, added to a catalog.
// Its schema uses multipleOf, outside the fast path's subset
// (internal/fastschema), so every call reaches the cache.
func cacheTool(t *testing.T) *tool.Tool {
	t.Helper()
	one := 1.0
	tl := &tool.Tool{
		Name: "get", Effect: tool.Read,
		InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
			"n": {Type: "integer", Minimum: &one, MultipleOf: &one},
		}, Required: []string{"n"}},
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil },
	}
	_, err := tool.NewCatalog(tl)
	require.NoError(t, err)
	return tl
}

// cacheRig is an arg policy, open to inspection, over a handler that
// counts what got through.
type cacheRig struct {
	ap      *argPolicy
	reached int
}

func (r *cacheRig) send(t *testing.T, tl *tool.Tool, args string) observation.Observation {
	t.Helper()
	obs, err := r.ap.intercept(context.Background(),
		invoker.Call{ID: "c1", Name: tl.Name, Tool: tl, Args: json.RawMessage(args), Run: "run-1"},
		func(context.Context, invoker.Call) (observation.Observation, error) {
			r.reached++
			return observation.Success("ok", nil), nil
		})
	require.NoError(t, err)
	return obs
}

func (r *cacheRig) remembered(tl *tool.Tool) int {
	r.ap.passed.mu.RLock()
	defer r.ap.passed.mu.RUnlock()
	return len(r.ap.passed.schemas[tl.Resolved()])
}

func TestArgPolicy_CacheRemembersOnlyPassedArgs(t *testing.T) {
	tl := cacheTool(t)
	cases := []struct {
		reason     string
		args       []string // sent in order
		want       outcome.Outcome
		remembered int // texts remembered after the last call
	}{
		{"a passed text is remembered once and passes again", []string{`{"n":2}`, `{"n":2}`, `{"n":2}`}, outcome.Success, 1},
		{"the same meaning in other bytes is validated and remembered on its own", []string{`{"n":2}`, `{ "n": 2 }`}, outcome.Success, 2},
		{"a failing text is never remembered and fails every time", []string{`{"n":0}`, `{"n":0}`}, outcome.Rejected, 0},
		{"a text that is not JSON is never remembered", []string{`{"n":`, `{"n":`}, outcome.Rejected, 0},
		{"blank arguments are validated as {} and fail the required n", []string{``, ``}, outcome.Rejected, 0},
		{"a text longer than MaxCachedArgs is validated every time", []string{longArgs(), longArgs()}, outcome.Success, 0},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			r := &cacheRig{ap: newArgPolicy(ArgPolicyOptions{})}
			var first observation.Observation
			for i, a := range c.args {
				obs := r.send(t, tl, a)
				require.Equal(t, c.want, obs.Outcome(), "%s: call %d = %v; want %v", c.reason, i+1, obs, c.want)
				if i == 0 {
					first = obs
				}
				assert.Equal(t, first, obs, "%s: call %d must answer as the first did", c.reason, i+1)
			}
			assert.Equal(t, c.remembered, r.remembered(tl), "%s: texts remembered", c.reason)
		})
	}
}

// longArgs is a valid argument text longer than MaxCachedArgs.
func longArgs() string {
	return `{"n":1` + strings.Repeat(" ", MaxCachedArgs) + `}`
}

func TestArgPolicy_CacheBounds(t *testing.T) {
	tl := cacheTool(t)
	r := &cacheRig{ap: newArgPolicy(ArgPolicyOptions{Cache: 3})}
	for i := 1; i <= 10; i++ {
		obs := r.send(t, tl, `{"n":`+strconv.Itoa(i)+`}`)
		require.Equal(t, outcome.Success, obs.Outcome(), "call %d = %v; want SUCCESS", i, obs)
		assert.LessOrEqual(t, r.remembered(tl), 3, "after %d texts, at most Cache=3 remembered", i)
	}
	assert.Equal(t, 3, r.remembered(tl), "a full cache keeps Cache texts")

	// Past maxCachedSchemas schemas, the cache forgets them all.
	p := r.ap.passed
	for i := range maxCachedSchemas + 1 {
		p.add(&jsonschema.Resolved{}, `{"n":`+strconv.Itoa(i)+`}`)
		p.mu.RLock()
		n := len(p.schemas)
		p.mu.RUnlock()
		require.LessOrEqual(t, n, maxCachedSchemas, "after %d schemas", i+1)
	}
}

func TestArgPolicy_CacheDisabled(t *testing.T) {
	tl := cacheTool(t)
	r := &cacheRig{ap: newArgPolicy(ArgPolicyOptions{Cache: -1})}
	require.Nil(t, r.ap.passed, "a negative Cache remembers nothing")
	for i := range 2 {
		assert.Equal(t, outcome.Success, r.send(t, tl, `{"n":2}`).Outcome(), "call %d without a cache", i+1)
		assert.Equal(t, outcome.Rejected, r.send(t, tl, `{"n":0}`).Outcome(), "call %d without a cache", i+1)
	}
	assert.Equal(t, 2, r.reached)
}

func TestArgPolicy_CachePolicyAskedEveryTime(t *testing.T) {
	tl := cacheTool(t)
	var asked []float64
	r := &cacheRig{ap: newArgPolicy(ArgPolicyOptions{Policy: func(_ context.Context, _ invoker.Call, args map[string]any) error {
		asked = append(asked, args["n"].(float64))
		if len(asked) == 2 {
			return &ArgError{Field: "n", Detail: "refused the second time"}
		}
		return nil
	}})}
	assert.Equal(t, outcome.Success, r.send(t, tl, `{"n":2}`).Outcome(), "first call: schema and policy pass")
	obs := r.send(t, tl, `{"n":2}`)
	assert.Equal(t, errcode.ArgRejected, obs.Code(), "second call of remembered bytes = %v; the policy still decides", obs)
	assert.Equal(t, []float64{2, 2}, asked, "the policy sees the decoded arguments on every call")
	assert.Equal(t, 1, r.reached)
}
