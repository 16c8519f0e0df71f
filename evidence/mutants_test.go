package evidence_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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

// Walk yields the leaves encoding/json would, and an error with no leaf
// for a payload that is not one JSON document, whatever its first and last
// bytes: the fast path for scalars runs before the document is checked.
func TestWalk_Edges(t *testing.T) {
	tests := []struct {
		payload string
		want    []string // path=text, sorted; nil with an error
		why     string
	}{
		{`{"a":{},"b":"x"}`, []string{"b=x"}, "an empty object inside an object: the walk goes on after it"},
		{`[{},{"c":1}]`, []string{"c=1"}, "an empty object inside a list"},
		{`{"a":{"b":{}},"c":true}`, []string{"c=true"}, "empty objects nested twice"},
		{`x"`, nil, "ends with a quote but does not start with one: not JSON"},
		{`"ab`, nil, "starts with a quote but does not end with one: not JSON"},
		{`""`, []string{"="}, "the empty string is a leaf"},
	}
	for _, tt := range tests {
		var got []string
		err := evidence.Walk([]byte(tt.payload), func(path, text string) bool {
			got = append(got, path+"="+text)
			return true
		})
		slices.Sort(got)
		ref, ok := refWalk([]byte(tt.payload))
		if tt.want == nil {
			assert.Error(t, err, "Walk(%s): %s", tt.payload, tt.why)
			assert.Empty(t, got, "Walk(%s) called fn: %s", tt.payload, tt.why)
			assert.False(t, ok, "the reference decodes %s", tt.payload)
			continue
		}
		require.NoError(t, err, "Walk(%s): %s", tt.payload, tt.why)
		assert.Equal(t, tt.want, got, "Walk(%s): %s", tt.payload, tt.why)
		assert.Equal(t, ref, got, "Walk(%s) against encoding/json: %s", tt.payload, tt.why)
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

// Provenance.Clean bounds what a tool result claims about its source before
// a ledger stores and seals it: the years 1000 to 9999 are kept and the
// years beside them dropped, a NUL byte is dropped wherever it stands (the
// first byte too), and a text longer than MaxProvenanceText is cut back to
// the start of the rune the bound falls in, never inside it.
func TestProvenance_Clean(t *testing.T) {
	at := func(y int) time.Time { return time.Date(y, 3, 1, 12, 0, 0, 0, time.UTC) }
	ascii := strings.Repeat("a", evidence.MaxProvenanceText)
	tests := []struct {
		in   evidence.Provenance
		want evidence.Provenance
		why  string
	}{
		{evidence.Provenance{FetchedAt: at(1000)}, evidence.Provenance{FetchedAt: at(1000)}, "the year 1000 is the first one kept"},
		{evidence.Provenance{FetchedAt: at(999)}, evidence.Provenance{}, "the year 999 is dropped"},
		{evidence.Provenance{FetchedAt: at(9999)}, evidence.Provenance{FetchedAt: at(9999)}, "the year 9999 is the last one kept"},
		{evidence.Provenance{FetchedAt: at(10000)}, evidence.Provenance{}, "the year 10000 is dropped"},
		{evidence.Provenance{Source: "\x00crm"}, evidence.Provenance{Source: "crm"}, "a NUL as the first byte is dropped"},
		{evidence.Provenance{Voucher: "A\x00B\x00"}, evidence.Provenance{Voucher: "AB"}, "every NUL is dropped"},
		{evidence.Provenance{ObjectID: ascii}, evidence.Provenance{ObjectID: ascii}, "a text of exactly the bound is kept whole"},
		{evidence.Provenance{ObjectID: ascii + "b"}, evidence.Provenance{ObjectID: ascii}, "a byte past the bound is cut"},
		{evidence.Provenance{Version: ascii[1:] + "é"}, evidence.Provenance{Version: ascii[1:]}, "the bound falls inside é: the cut moves back to its start"},
		{evidence.Provenance{IdempotencyKey: "k\xffk"}, evidence.Provenance{IdempotencyKey: "k\uFFFDk"}, "an invalid byte becomes U+FFFD"},
	}
	for _, tt := range tests {
		got := tt.in.Clean()
		assert.Equal(t, tt.want, got, tt.why)
		for _, s := range []string{got.Source, got.ObjectID, got.Version, got.Voucher, got.IdempotencyKey} {
			assert.True(t, utf8.ValidString(s), "valid UTF-8: %s", tt.why)
			assert.LessOrEqual(t, len(s), evidence.MaxProvenanceText, tt.why)
		}
	}
}

// StepRef names the record that holds a task step's outputs.
func TestStepRef(t *testing.T) {
	assert.Equal(t, "step:fetch", evidence.StepRef("fetch"))
	assert.True(t, strings.HasPrefix(evidence.StepRef("x"), evidence.StepPrefix))
}
