package tool_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/tool"
)

func TestRetryPolicyDelay(t *testing.T) {
	const s = time.Second
	cases := []struct {
		name   string
		reason string
		p      *tool.RetryPolicy
		n      int
		want   time.Duration
	}{
		{"nil policy", "no policy, no delay", nil, 2, 0},
		{"first attempt", "nothing precedes attempt 1", &tool.RetryPolicy{BaseDelay: s}, 1, 0},
		{"attempt zero", "out of range", &tool.RetryPolicy{BaseDelay: s}, 0, 0},
		{"no base", "BaseDelay 0 means retry at once", &tool.RetryPolicy{}, 3, 0},
		{"negative base", "a negative base is no delay", &tool.RetryPolicy{BaseDelay: -s}, 3, 0},
		{"second attempt", "the base delay", &tool.RetryPolicy{BaseDelay: s}, 2, s},
		{"third attempt", "doubles", &tool.RetryPolicy{BaseDelay: s}, 3, 2 * s},
		{"fifth attempt", "doubles each time", &tool.RetryPolicy{BaseDelay: s}, 5, 8 * s},
		{"capped", "MaxDelay caps the growth", &tool.RetryPolicy{BaseDelay: s, MaxDelay: 5 * s}, 5, 5 * s},
		{"cap above", "a cap above the delay changes nothing", &tool.RetryPolicy{BaseDelay: s, MaxDelay: time.Minute}, 4, 4 * s},
		{"base above cap", "the cap holds even for the first retry", &tool.RetryPolicy{BaseDelay: time.Minute, MaxDelay: s}, 2, s},
		{"capped far out", "a huge attempt number stays at the cap", &tool.RetryPolicy{BaseDelay: s, MaxDelay: time.Hour}, 1 << 20, time.Hour},
		{"no overflow", "doubling saturates instead of wrapping negative", &tool.RetryPolicy{BaseDelay: s}, 200, math.MaxInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.p.Delay(tc.n, nil)
			assert.Equalf(t, tc.want, got, "Delay(%d) = %v; want %v (%s)", tc.n, got, tc.want, tc.reason)
		})
	}
}

func TestRetryPolicyJitter(t *testing.T) {
	p := &tool.RetryPolicy{BaseDelay: time.Second, Jitter: 0.5}
	a := p.Delay(3, rand.New(rand.NewPCG(1, 2)))
	b := p.Delay(3, rand.New(rand.NewPCG(1, 2)))
	assert.Equal(t, a, b, "the same seed gives the same delay")

	rnd := rand.New(rand.NewPCG(7, 7))
	seen := map[time.Duration]bool{}
	for range 100 {
		d := p.Delay(3, rnd)
		assert.LessOrEqual(t, d, 2*time.Second, "jitter only shortens")
		assert.GreaterOrEqual(t, d, time.Second, "jitter 0.5 removes at most half")
		seen[d] = true
		g := p.Delay(3, nil)
		assert.True(t, g >= time.Second && g <= 2*time.Second, "Delay with the global source = %v; want within [1s,2s]", g)
	}
	assert.Greater(t, len(seen), 50, "jitter spreads the delays")

	full := &tool.RetryPolicy{BaseDelay: time.Second, Jitter: 3}
	for range 50 {
		d := full.Delay(2, rnd)
		assert.True(t, d >= 0 && d <= time.Second, "Jitter above 1 is clamped to full jitter: got %v", d)
	}
	neg := &tool.RetryPolicy{BaseDelay: time.Second, Jitter: -1}
	assert.Equal(t, time.Second, neg.Delay(2, rnd), "negative jitter is no jitter")

	huge := &tool.RetryPolicy{BaseDelay: time.Second, Jitter: 1}
	assert.GreaterOrEqual(t, huge.Delay(500, rnd), time.Duration(0), "jitter on the saturated delay never goes negative")
}

func TestRetryPolicyAllows(t *testing.T) {
	var nilPolicy *tool.RetryPolicy
	assert.False(t, nilPolicy.Allows(errcode.ToolUnavailable), "a nil policy retries nothing")

	def := &tool.RetryPolicy{Attempts: 3}
	for _, c := range errcode.All() {
		assert.Equalf(t, c.Retryable(), def.Allows(c), "default Allows(%v) follows errcode.Code.Retryable", c)
	}
	assert.True(t, def.Allows(errcode.ToolUnavailable))
	assert.False(t, def.Allows(errcode.ToolTimeout), "a timeout is not retried by default: the effect is unknown")

	custom := &tool.RetryPolicy{Attempts: 3, Retryable: func(c errcode.Code) bool { return c == errcode.ToolTimeout }}
	assert.True(t, custom.Allows(errcode.ToolTimeout), "Retryable overrides the default")
	assert.False(t, custom.Allows(errcode.ToolUnavailable), "Retryable overrides the default")
}
