package evidence_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/outcome"
)

// This file holds tests written to kill mutants that lived through the
// package's other tests (docs/mutation.md).

// ScalarText's fast path takes only what needs no decoding: a string with
// an escape or a control character goes to the decoder, and the empty
// input is no scalar; the integer form of a number stops below 2^53.
func TestScalarText_Edges(t *testing.T) {
	tests := []struct {
		raw  string
		want string
		ok   bool
		why  string
	}{
		{`"a\"b"`, `a"b`, true, "an escaped quote is decoded"},
		{`"a\\b"`, `a\b`, true, "an escaped backslash is decoded"},
		{`"\u0041"`, "A", true, "a unicode escape is decoded"},
		{"\"a\tb\"", "", false, "a raw control character is not JSON"},
		{`""`, "", true, "the empty string is a scalar"},
		{`"\\"`, `\`, true, "a string of one escaped backslash"},
		{"\"\t\"", "", false, "a string of one raw control character is not JSON"},
		{`"""`, "", false, "a quote inside quotes is not JSON"},
		{``, "", false, "nothing is no scalar"},
		{`-5`, "-5", true, "a negative integer"},
		{`-`, "", false, "a sign alone is not a number"},
		{`9007199254740991.0`, "9007199254740991", true, "2^53-1 prints as an integer"},
		{`9007199254740992.0`, "9.007199254740992e+15", true, "2^53 does not"},
	}
	for _, tt := range tests {
		got, ok := evidence.ScalarText([]byte(tt.raw))
		assert.Equal(t, tt.want, got, "ScalarText(%s): %s", tt.raw, tt.why)
		assert.Equal(t, tt.ok, ok, "ScalarText(%s) ok: %s", tt.raw, tt.why)
	}
}

// Lookup prefers a call's latest success, even when it is the run's
// first record and a later attempt failed.
func TestMemory_LookupPrefersSuccessAtIndexZero(t *testing.T) {
	ctx := context.Background()
	m := evidence.NewMemory()
	require.NoError(t, m.Append(ctx, "r", evidence.Record{CallID: "c", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: []byte(`{"id":1}`)}))
	require.NoError(t, m.Append(ctx, "r", evidence.Record{CallID: "c", Tool: "t", Outcome: outcome.Failed, Code: errcode.ToolTimeout, Attempt: 2}))
	rec, ok, err := m.Lookup(ctx, "r", "c")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, outcome.Success, rec.Outcome)
	assert.Equal(t, 1, rec.Attempt)
}

// Import keeps its own copy of the payloads, as Append does.
func TestMemory_ImportCopiesPayload(t *testing.T) {
	ctx := context.Background()
	buf := []byte(`{"id":"a"}`)
	m := evidence.NewMemory()
	require.NoError(t, m.Import(ctx, "r", evidence.Snapshot{Records: []evidence.Record{{CallID: "c", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: buf}}}))
	copy(buf, `{"id":"b"}`)
	rec, _, err := m.Lookup(ctx, "r", "c")
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"a"}`, string(rec.Payload), "the caller reused its buffer after Import")
}
