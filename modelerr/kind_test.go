package modelerr_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/modelerr"
)

// allKinds lists every defined kind; TestKindCompleteness proves it is
// the whole set.
var allKinds = []modelerr.Kind{
	modelerr.Unknown, modelerr.RateLimited, modelerr.Overloaded, modelerr.Server,
	modelerr.Unreachable, modelerr.Timeout, modelerr.Canceled, modelerr.Malformed,
	modelerr.Auth, modelerr.Request, modelerr.Truncated,
}

func TestKindCompleteness(t *testing.T) {
	seen := map[string]bool{}
	for i, k := range allKinds {
		assert.Equal(t, i, int(k), "numeric values are dense and stable: %s", k)
		assert.True(t, k.IsValid(), "Kind(%d).IsValid() = false; want true", int(k))
		name := k.String()
		assert.NotContains(t, name, "Kind(", "Kind %d has no name", int(k))
		assert.False(t, seen[name], "name %q used twice", name)
		seen[name] = true

		text, err := k.MarshalText()
		require.NoError(t, err, "%s.MarshalText()", name)
		assert.Equal(t, name, string(text), "the text form is the name")
		var back modelerr.Kind
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, k, back, "round trip of %s", name)
	}
	next := allKinds[len(allKinds)-1] + 1
	assert.False(t, next.IsValid(), "a kind after %s was added without updating allKinds", allKinds[len(allKinds)-1])
}

func TestKindStableNames(t *testing.T) {
	// The names are persisted and logged: changing one is a breaking change.
	want := map[modelerr.Kind]string{
		modelerr.Unknown: "unknown", modelerr.RateLimited: "rate_limited", modelerr.Overloaded: "overloaded",
		modelerr.Server: "server", modelerr.Unreachable: "unreachable", modelerr.Timeout: "timeout",
		modelerr.Canceled: "canceled", modelerr.Malformed: "malformed", modelerr.Auth: "auth",
		modelerr.Request: "request", modelerr.Truncated: "truncated",
	}
	for _, k := range allKinds {
		assert.Equal(t, want[k], k.String(), "Kind(%d).String()", int(k))
	}
}

func TestKindRetryable(t *testing.T) {
	tests := []struct {
		kind   modelerr.Kind
		want   bool
		reason string
	}{
		{modelerr.Unknown, false, "an unclassified failure is never retried blindly"},
		{modelerr.RateLimited, true, "the limit resets; Retry-After says when"},
		{modelerr.Overloaded, true, "overload is transient"},
		{modelerr.Server, true, "a 5xx may not repeat"},
		{modelerr.Unreachable, true, "the server may come back"},
		{modelerr.Timeout, true, "a later attempt may be faster"},
		{modelerr.Canceled, false, "the caller asked to stop"},
		{modelerr.Malformed, false, "the same body would come back broken; a host must look"},
		{modelerr.Auth, false, "the key does not fix itself"},
		{modelerr.Request, false, "the same request fails the same way"},
		{modelerr.Truncated, true, "a stream cut before its end marker may come whole next time"},
		{modelerr.Kind(-1), false, "an invalid kind is never retryable"},
		{modelerr.Kind(11), false, "an invalid kind is never retryable"},
	}
	require.Len(t, tests, len(allKinds)+2, "every kind has a case")
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			assert.Equal(t, tt.want, tt.kind.Retryable(), "%s.Retryable() = %v; want %v: %s", tt.kind, tt.kind.Retryable(), tt.want, tt.reason)
		})
	}
}

func TestKindInvalid(t *testing.T) {
	tests := []struct {
		kind   modelerr.Kind
		name   string
		reason string
	}{
		{modelerr.Kind(11), "Kind(11)", "one past the last kind"},
		{modelerr.Kind(-1), "Kind(-1)", "below the zero value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.False(t, tt.kind.IsValid(), "%s", tt.reason)
			assert.Equal(t, tt.name, tt.kind.String(), "%s: no fallback name", tt.reason)
			_, err := tt.kind.MarshalText()
			assert.Error(t, err, "%s is never persisted", tt.name)
		})
	}
}

func TestKindUnmarshalRejects(t *testing.T) {
	tests := []struct {
		text   string
		reason string
	}{
		{"teapot", "not a name"},
		{"RATE_LIMITED", "names are case-sensitive"},
		{"Kind(11)", "the fallback form of String is not a name"},
		{"", "empty is not a name"},
		{"1", "numbers are not names"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			k := modelerr.Server
			err := k.UnmarshalText([]byte(tt.text))
			assert.Error(t, err, "UnmarshalText(%q) = nil; want an error: %s", tt.text, tt.reason)
			assert.Equal(t, modelerr.Server, k, "a rejected name leaves the value unchanged")
		})
	}
}

func TestKindJSON(t *testing.T) {
	type event struct {
		Kind modelerr.Kind `json:"kind"`
	}
	b, err := json.Marshal(event{Kind: modelerr.RateLimited})
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"rate_limited"}`, string(b))
	var back event
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, modelerr.RateLimited, back.Kind)
	assert.Error(t, json.Unmarshal([]byte(`{"kind":"slow"}`), &back), "unknown names are rejected")
}
