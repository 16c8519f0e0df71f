package outcome_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/outcome"
)

func TestSpecTable(t *testing.T) {
	// Specification §3: only SUCCESS advances; FAILED and REJECTED stall;
	// DEFERRED does neither.
	tests := []struct {
		o        outcome.Outcome
		name     string
		advances bool
		stalls   bool
		reason   string
	}{
		{outcome.Success, "SUCCESS", true, false, "the tool ran and succeeded: progress"},
		{outcome.Failed, "FAILED", false, true, "the tool ran and failed: one no-progress"},
		{outcome.Rejected, "REJECTED", false, true, "a rule violation the model could have avoided: one no-progress"},
		{outcome.Deferred, "DEFERRED", false, false, "a legitimate call waiting for a step: bounded only by the round limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.name, tt.o.String(), tt.reason)
			assert.Equal(t, tt.advances, tt.o.Advances(), "%v.Advances(): %s", tt.o, tt.reason)
			assert.Equal(t, tt.stalls, tt.o.Stalls(), "%v.Stalls(): %s", tt.o, tt.reason)
			assert.True(t, tt.o.IsValid())
		})
	}
}

func TestZeroValue(t *testing.T) {
	var o outcome.Outcome
	assert.False(t, o.IsValid(), "the zero value reports itself invalid")
	assert.NotEqual(t, outcome.Success, o, "an uninitialised result must never read as success")
	assert.False(t, o.Advances(), "the zero value never advances")
	assert.True(t, o.Stalls(), "the zero value stalls, so a buggy producer can only stop a loop early")
	assert.Equal(t, "OUTCOME(0)", o.String())
	_, err := o.MarshalText()
	assert.Error(t, err, "the zero value is never persisted")
	_, err = json.Marshal(struct{ O outcome.Outcome }{})
	assert.Error(t, err)
}

func TestAllIsCompleteAndNamed(t *testing.T) {
	all := outcome.All()
	require.Len(t, all, 4, "exactly four verdicts")
	seen := map[string]bool{}
	for _, o := range all {
		name := o.String()
		assert.NotContains(t, name, "OUTCOME(", "%d has no fallback name", o)
		assert.False(t, seen[name], "name %s is unique", name)
		seen[name] = true
		back, err := outcome.Parse(name)
		require.NoError(t, err)
		assert.Equal(t, o, back, "Parse(%q) round-trips", name)
	}
	all[0] = outcome.Deferred
	assert.Equal(t, outcome.Success, outcome.All()[0], "All returns a fresh copy")
	// Values just outside the bounds are invalid.
	assert.False(t, outcome.Outcome(5).IsValid())
	assert.True(t, outcome.Outcome(5).Stalls())
}

func TestTextRoundTrip(t *testing.T) {
	for _, o := range outcome.All() {
		b, err := json.Marshal(o)
		require.NoError(t, err)
		assert.Equal(t, `"`+o.String()+`"`, string(b))
		var back outcome.Outcome
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, o, back)
	}
}

func TestParseRejectsUnknownNames(t *testing.T) {
	tests := []struct{ in, reason string }{
		{"", "empty"},
		{"success", "names are case-sensitive"},
		{"OK", "the old boolean vocabulary is not a verdict"},
		{"OUTCOME(0)", "the invalid value's display form is not a name"},
		{" SUCCESS", "no trimming"},
	}
	for _, tt := range tests {
		got, err := outcome.Parse(tt.in)
		assert.Error(t, err, "Parse(%q): %s", tt.in, tt.reason)
		assert.Zero(t, got)
		o := outcome.Failed
		assert.Error(t, o.UnmarshalText([]byte(tt.in)))
		assert.Equal(t, outcome.Failed, o, "UnmarshalText leaves the value unchanged on error")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"SUCCESS", "FAILED", "REJECTED", "DEFERRED", "", "x", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := outcome.Parse(s)
		if err != nil {
			if o != 0 {
				t.Fatalf("Parse(%q) = %v with error; want zero", s, o)
			}
			return
		}
		b, err := o.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%v) after a successful Parse: %v", o, err)
		}
		var again outcome.Outcome
		if err := again.UnmarshalText(b); err != nil || again != o {
			t.Fatalf("round trip of %q = %v, %v; want %v", s, again, err, o)
		}
	})
}
