package evidence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/evidence/evidencetest"
	"github.com/reactguard/reactguard/outcome"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemory_Conformance(t *testing.T) {
	evidencetest.Run(t, func() evidence.Ledger { return evidence.NewMemory() })
}

func TestMemory_AppendCopiesPayload(t *testing.T) {
	ctx := context.Background()
	m := evidence.NewMemory()
	buf := []byte(`{"id":"a"}`)
	require.NoError(t, m.Append(ctx, "r", evidence.Record{CallID: "c", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: buf}))
	copy(buf, `{"id":"b"}`)
	rs, err := m.Records(ctx, "r")
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"a"}`, string(rs[0].Payload), "Records()[0].Payload after the caller reused its buffer")
	has, _ := m.HasValue(ctx, "r", "t", "id", "a")
	assert.True(t, has, "HasValue(t, id, a) = false; want true: the index is built from the payload as appended")
}

func TestMemory_ExportSharesNoMemory(t *testing.T) {
	ctx := context.Background()
	m := evidence.NewMemory()
	require.NoError(t, m.Append(ctx, "r", evidence.Record{CallID: "c", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: json.RawMessage(`{"id":"a"}`)}))
	s, err := m.Export(ctx, "r")
	require.NoError(t, err)
	copy(s.Records[0].Payload, `{"id":"b"}`)
	rs, _ := m.Records(ctx, "r")
	assert.JSONEq(t, `{"id":"a"}`, string(rs[0].Payload), "Records()[0].Payload after the snapshot was modified")

	empty, err := m.Export(ctx, "never")
	require.NoError(t, err)
	assert.Empty(t, empty.Records, "Export(unknown run).Records")
}

func TestMemory_Forget(t *testing.T) {
	ctx := context.Background()
	m := evidence.NewMemory()
	require.NoError(t, m.Append(ctx, "r", evidence.Record{CallID: "c", Tool: "t", Outcome: outcome.Success, Attempt: 1}))
	require.NoError(t, m.AddUserText(ctx, "r", "hello"))
	m.Forget("r")
	has, err := m.HasResult(ctx, "r", "t")
	require.NoError(t, err)
	assert.False(t, has, "HasResult after Forget")
	said, _ := m.UserSaid(ctx, "r", "hello")
	assert.False(t, said, "UserSaid after Forget")
}

func TestMemory_EmptyUserTextIgnored(t *testing.T) {
	ctx := context.Background()
	m := evidence.NewMemory()
	require.NoError(t, m.AddUserText(ctx, "r", "  "))
	require.NoError(t, m.Import(ctx, "r2", evidence.Snapshot{UserTexts: []string{"", "yes"}}))
	s, _ := m.Export(ctx, "r")
	assert.Empty(t, s.UserTexts, "Export after AddUserText(blank)")
	s2, _ := m.Export(ctx, "r2")
	assert.Equal(t, []string{"yes"}, s2.UserTexts, "Export after Import with a blank text")
}

func TestMemory_ReadsOnUnknownRun(t *testing.T) {
	ctx := context.Background()
	m := evidence.NewMemory()
	_, found, err := m.Lookup(ctx, "none", "c")
	assert.False(t, found)
	assert.NoError(t, err)
	has, err := m.HasResult(ctx, "none", "t")
	assert.False(t, has)
	assert.NoError(t, err)
	has, err = m.HasValue(ctx, "none", "t", "f", "v")
	assert.False(t, has)
	assert.NoError(t, err)
	n, _, err := m.Executions(ctx, "none", "fp")
	assert.Zero(t, n)
	assert.NoError(t, err)
	said, err := m.UserSaid(ctx, "none", "v")
	assert.False(t, said)
	assert.NoError(t, err)
}

func TestMemory_UserSaidWordBoundaries(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		reason string
		text   string
		value  string
		want   bool
	}{
		{"a whole word", "site 42, please", "42", true},
		{"a digit run continues", "site 421", "42", false},
		{"a letter run continues before", "x42", "42", false},
		{"a later occurrence at a boundary", "site 421 and 42", "42", true},
		{"punctuation at the value's edge needs no boundary", "id:-7 x", ":-7", true},
		{"a digit at the value's edge does", "id:-7x", ":-7", false},
		{"ideographs are not separated by spaces", "删除北京的站点", "北京", true},
		{"letters of spaced scripts are", "Zürich", "rich", false},
		{"the whole text", "42", "42", true},
		{"longer than the text", "4", "42", false},
	}
	for _, tt := range tests {
		m := evidence.NewMemory()
		require.NoError(t, m.AddUserText(ctx, "r", tt.text))
		got, err := m.UserSaid(ctx, "r", tt.value)
		require.NoError(t, err)
		assert.Equalf(t, tt.want, got, "UserSaid(%q) in %q = %v; want %v (%s)", tt.value, tt.text, got, tt.want, tt.reason)
		assert.Equalf(t, tt.want, evidence.Said(tt.text, tt.value), "Said(%q, %q); want the rule of UserSaid (%s)", tt.text, tt.value, tt.reason)
	}
	assert.True(t, evidence.Said("Delete SITE-7 now", " site-7 "), "Said folds case and trims the value")
	assert.False(t, evidence.Said("anything", "  "), "Said: an empty value is never said")
}

func ExampleSaid() {
	fmt.Println(evidence.Said("Please delete site 42.", "42"))
	fmt.Println(evidence.Said("Please delete site 421.", "42"))
	// Output:
	// true
	// false
}

func TestWalk(t *testing.T) {
	tests := []struct {
		reason  string
		payload string
		want    []string // "path=text", sorted
		err     bool
	}{
		{"objects join keys with dots", `{"a":{"b":1}}`, []string{"a.b=1"}, false},
		{"arrays are transparent", `{"a":[{"b":"x"},{"b":"y"}]}`, []string{"a.b=x", "a.b=y"}, false},
		{"nested arrays too", `[[1,2],[3]]`, []string{"=1", "=2", "=3"}, false},
		{"null is skipped", `{"a":null,"b":false}`, []string{"b=false"}, false},
		{"numbers are canonical", `{"a":1.0,"b":2.5e0,"c":1e300,"d":12345678901234567890}`, []string{"a=1", "b=2.5", "c=1e+300", "d=12345678901234567890"}, false},
		{"a scalar payload", `"s"`, []string{"=s"}, false},
		{"empty payload", ``, nil, false},
		{"not JSON", `{"a":`, nil, true},
		{"two documents", `{} {}`, nil, true},
	}
	for _, tt := range tests {
		var got []string
		err := evidence.Walk([]byte(tt.payload), func(path, text string) bool {
			got = append(got, path+"="+text)
			return true
		})
		sort.Strings(got)
		if tt.err {
			assert.Errorf(t, err, "Walk(%s) = nil; want an error (%s)", tt.payload, tt.reason)
			assert.Empty(t, got, "Walk(%s) called fn despite the error", tt.payload)
			continue
		}
		require.NoErrorf(t, err, "Walk(%s) (%s)", tt.payload, tt.reason)
		assert.Equalf(t, tt.want, got, "Walk(%s) = %v; want %v (%s)", tt.payload, got, tt.want, tt.reason)
	}
}

func TestWalk_StopsEarly(t *testing.T) {
	n := 0
	err := evidence.Walk([]byte(`{"a":[1,2,3],"b":{"c":[4,5]}}`), func(string, string) bool {
		n++
		return false
	})
	require.NoError(t, err)
	assert.Equal(t, 1, n, "Walk called fn %d times after it returned false; want 1", n)
}

func TestScalarText(t *testing.T) {
	tests := []struct {
		reason string
		raw    string
		want   string
		ok     bool
	}{
		{"a string loses its quotes", `"abc"`, "abc", true},
		{"an integer keeps its digits", `42`, "42", true},
		{"an integral float prints as an integer", `42.0`, "42", true},
		{"an exponent is resolved", `4.2e1`, "42", true},
		{"a fraction", `0.25`, "0.25", true},
		{"a boolean", `true`, "true", true},
		{"null has no text", `null`, "", false},
		{"an object has no text", `{"a":1}`, "", false},
		{"an array has no text", `[1]`, "", false},
		{"garbage has no text", `4x`, "", false},
	}
	for _, tt := range tests {
		got, ok := evidence.ScalarText([]byte(tt.raw))
		assert.Equalf(t, tt.want, got, "ScalarText(%s) = %q; want %q (%s)", tt.raw, got, tt.want, tt.reason)
		assert.Equalf(t, tt.ok, ok, "ScalarText(%s) ok = %v; want %v (%s)", tt.raw, ok, tt.ok, tt.reason)
	}
}

// FuzzMemoryIndex checks that any payload bytes either are refused with
// ErrInvalidPayload or are indexed so that every leaf Walk reports is found.
func FuzzMemoryIndex(f *testing.F) {
	for _, s := range []string{
		`{"sites":[{"id":"s-1"},{"id":2}]}`, `[[[]]]`, `"x"`, `1e999`, `{"a.b":{"c":null}}`,
		`{"a":"\u0000"}`, ``, `{`, `{"":""}`, `[1,2,3] x`, `-0.0`, `{"a":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		ctx := context.Background()
		m := evidence.NewMemory()
		err := m.Append(ctx, "r", evidence.Record{CallID: "c", Tool: "t", Outcome: outcome.Success, Attempt: 1, Payload: payload})
		if err != nil {
			if len(payload) == 0 || json.Valid(payload) {
				t.Fatalf("Append(%q) = %v; want nil for a valid payload", payload, err)
			}
			return
		}
		_ = evidence.Walk(payload, func(path, text string) bool {
			has, err := m.HasValue(ctx, "r", "t", path, text)
			if err != nil || !has {
				t.Fatalf("HasValue(t, %q, %q) = %v, %v after Append(%q); want true", path, text, has, err, payload)
			}
			if has, _ := m.HasValue(ctx, "r", "", "", text); !has {
				t.Fatalf("HasValue(any, %q) = false after Append(%q); want true", text, payload)
			}
			return true
		})
	})
}

func ExampleNewMemory() {
	ctx := context.Background()
	ledger := evidence.NewMemory()
	_ = ledger.AddUserText(ctx, "run-1", "Delete the site called blog.")
	_ = ledger.Append(ctx, "run-1", evidence.Record{
		CallID: "call-1", Tool: "list_sites", Outcome: outcome.Success, Attempt: 1,
		Payload: json.RawMessage(`{"sites":[{"id":"s-7","name":"blog"},{"id":"s-8","name":"shop"}]}`),
	})
	ok, _ := ledger.HasValue(ctx, "run-1", "list_sites", "sites.id", "s-7")
	fmt.Println("s-7 is a sites.id of list_sites:", ok)
	ok, _ = ledger.HasValue(ctx, "run-1", "list_sites", "sites.id", "s-9")
	fmt.Println("s-9 is a sites.id of list_sites:", ok)
	said, _ := ledger.UserSaid(ctx, "run-1", "blog")
	fmt.Println("the user said blog:", said)
	// Output:
	// s-7 is a sites.id of list_sites: true
	// s-9 is a sites.id of list_sites: false
	// the user said blog: true
}

func ExampleMemory_Export() {
	ctx := context.Background()
	a := evidence.NewMemory()
	_ = a.Append(ctx, "run-1", evidence.Record{
		CallID: "call-1", Tool: "get_order", Outcome: outcome.Success, Attempt: 1,
		Payload: json.RawMessage(`{"order":{"id":1001}}`),
	})
	snap, _ := a.Export(ctx, "run-1")
	data, _ := json.Marshal(snap)
	fmt.Println(string(data))

	// Another process restores the run.
	var back evidence.Snapshot
	_ = json.Unmarshal(data, &back)
	b := evidence.NewMemory()
	_ = b.Import(ctx, "run-1", back)
	ok, _ := b.HasValue(ctx, "run-1", "get_order", "order.id", "1001")
	fmt.Println("restored:", ok)
	// Output:
	// {"records":[{"call_id":"call-1","tool":"get_order","outcome":"SUCCESS","payload":{"order":{"id":1001}},"attempt":1,"round":0}]}
	// restored: true
}

func ExampleWalk() {
	_ = evidence.Walk([]byte(`{"order":{"lines":[{"sku":"A-1"},{"sku":"B-2"}]}}`), func(path, text string) bool {
		fmt.Println(path, text)
		return true
	})
	// Output:
	// order.lines.sku A-1
	// order.lines.sku B-2
}

func TestWords(t *testing.T) {
	tests := []struct {
		reason string
		in     string
		want   []string
	}{
		{"split at spaces, punctuation trimmed", "delete (s-1), now!", []string{"delete", "s-1", "now"}},
		{"inner punctuation stays", "see id=prod-main.v2.", []string{"see", "id=prod-main.v2"}},
		{"a single word is the whole value", "s-1", nil},
		{"text without spaces is one word", "删除北京的站点", nil},
		{"only punctuation", "-- ...", nil},
		{"one field of only punctuation", "--", nil},
		{"one field trimmed to another word", "(s-1),", []string{"s-1"}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		got := evidence.Words(tt.in)
		assert.Equalf(t, tt.want, got, "Words(%q) = %q; want %q (%s)", tt.in, got, tt.want, tt.reason)
	}
}

// FuzzScalarText checks the decoder-free fast path against encoding/json.
func FuzzScalarText(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"\u00e9"`, `-12`, `007`, `-`, `1.50`, `true`, `null`, "\"\xff\"", `"a"b"`, ` 42 `, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := evidence.ScalarText(raw)
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		if err == nil {
			if _, e := dec.Token(); e != io.EOF {
				err = errors.New("trailing data")
			}
		}
		if err != nil {
			if ok {
				t.Fatalf("ScalarText(%q) = %q, true; want false: not one JSON document", raw, got)
			}
			return
		}
		switch x := v.(type) {
		case string:
			if !ok || got != x {
				t.Fatalf("ScalarText(%q) = %q, %v; want %q, true", raw, got, ok, x)
			}
		case bool:
			if !ok || got != strconv.FormatBool(x) {
				t.Fatalf("ScalarText(%q) = %q, %v; want %v, true", raw, got, ok, x)
			}
		case json.Number:
			want, errWant := strconv.ParseFloat(string(x), 64)
			have, errHave := strconv.ParseFloat(got, 64)
			if !ok || (errWant == nil) != (errHave == nil) || errWant == nil && want != have {
				t.Fatalf("ScalarText(%q) = %q, %v; want the number %s", raw, got, ok, x)
			}
		default:
			if ok {
				t.Fatalf("ScalarText(%q) = %q, true; want false for %T", raw, got, v)
			}
		}
	})
}

// TestMemory_AttemptNumbers checks duplicate detection over every range of
// attempt numbers the index stores differently (1 to 64 in a bit set,
// others in a map): the first (call, attempt) is kept, a repeat is not.
func TestMemory_AttemptNumbers(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		reason   string
		attempts []int
		want     []int // attempts recorded, in order
	}{
		{"the bit set range", []int{1, 2, 1, 64, 64}, []int{1, 2, 64}},
		{"past the bit set", []int{65, 1, 65, 1000, 1000}, []int{65, 1, 1000}},
		{"zero and negative attempts", []int{0, -1, 0, -1, 1}, []int{0, -1, 1}},
	} {
		m := evidence.NewMemory()
		for i, a := range c.attempts {
			require.NoError(t, m.Append(ctx, "r", evidence.Record{CallID: "c", Tool: "t", Outcome: outcome.Success, Attempt: a, Round: i}))
		}
		rs, err := m.Records(ctx, "r")
		require.NoError(t, err)
		var got []int
		for _, r := range rs {
			got = append(got, r.Attempt)
		}
		assert.Equal(t, c.want, got, "%s: Append(attempts %v) then Records() attempts", c.reason, c.attempts)
	}
}

// TestMemory_ExecutionsCountsDistinctCalls checks that a fingerprint counts
// each call id once however many attempts it has, and that the latest
// record comes back.
func TestMemory_ExecutionsCountsDistinctCalls(t *testing.T) {
	ctx := context.Background()
	m := evidence.NewMemory()
	for i, id := range []string{"a", "a", "b", "a", "c", "b"} {
		require.NoError(t, m.Append(ctx, "r", evidence.Record{CallID: id, Tool: "t", Fingerprint: "fp", Outcome: outcome.Success, Attempt: i + 1, Round: i}))
		require.NoError(t, m.Append(ctx, "r", evidence.Record{CallID: id, Tool: "t", Fingerprint: "other", Outcome: outcome.Success, Attempt: 100 + i, Round: i}))
	}
	n, last, err := m.Executions(ctx, "r", "fp")
	require.NoError(t, err)
	assert.Equal(t, 3, n, "Executions(fp) after calls a, a, b, a, c, b = %d; want 3 distinct calls", n)
	assert.Equal(t, "b", last.CallID, "the latest record of fp")
	assert.Equal(t, 6, last.Attempt)
}

// FuzzWords checks Words, whose one-field fast path avoids splitting,
// against the plain definition: split at white space, trim punctuation and
// symbols, drop empty pieces and s itself.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"", "a", "(s-1),", "--", "delete (s-1), now!", "北京 站点", "a\u00a0b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want []string
		for _, fld := range strings.FieldsFunc(s, unicode.IsSpace) {
			w := strings.TrimFunc(fld, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) })
			if w != "" && w != s {
				want = append(want, w)
			}
		}
		if got := evidence.Words(s); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %q; want %q", s, got, want)
		}
	})
}

// Values are indexed lazily but never missed: appends between lookups,
// from several goroutines, are all found by the next lookup.
func TestMemory_LazyValuesSeeEveryAppend(t *testing.T) {
	ctx := context.Background()
	m := evidence.NewMemory()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				id := fmt.Sprintf("c%d_%d", g, i)
				if err := m.Append(ctx, "r", evidence.Record{CallID: id, Tool: "t", Outcome: outcome.Success, Attempt: 1,
					Payload: json.RawMessage(`{"id":"` + id + `"}`)}); err != nil {
					t.Error(err)
				}
				if has, _ := m.HasValue(ctx, "r", "t", "id", id); !has {
					t.Errorf("HasValue(%s) right after its Append = false", id)
				}
			}
		})
	}
	wg.Wait()
	for g := range 8 {
		for i := range 50 {
			id := fmt.Sprintf("c%d_%d", g, i)
			if has, _ := m.HasValue(ctx, "r", "", "", id); !has {
				t.Fatalf("HasValue(any, %s) = false after all appends", id)
			}
		}
	}
}

// FuzzMemoryExecutions holds Executions to a plain model of it — the
// number of distinct call ids recorded under a fingerprint and the latest
// record — over sequences of records whose fingerprints are of
// fingerprint.Of's form (indexed by their bytes), the same in upper case
// or cut short (indexed by their string), or anything else. Each pair of
// input bytes is one record: the first picks the call id and attempt, the
// second the fingerprint.
func FuzzMemoryExecutions(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 0, 2, 1})
	f.Add([]byte{0, 1, 0, 2, 0, 3, 0, 4, 0, 5})
	f.Add([]byte{7, 0, 7, 1, 8, 0, 9, 2, 9, 3})
	hexA := "0123456789abcdef0123456789abcdef"
	prints := []string{
		hexA,
		strings.ToUpper(hexA), // the same letters in upper case: another fingerprint
		"fedcba98765432100123456789abcdef",
		hexA[:31],       // short
		hexA[:31] + "g", // not hex
		"fp",            // a host's own
		"",              // not counted
		"ffffffffffffffffffffffffffffffff",
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		ctx := context.Background()
		m := evidence.NewMemory()
		type key struct {
			id      string
			attempt int
		}
		seen := map[key]bool{}
		ids := map[string]map[string]bool{}
		last := map[string]evidence.Record{}
		for i := 0; i+1 < len(ops); i += 2 {
			r := evidence.Record{
				CallID: "c" + strconv.Itoa(int(ops[i]%5)), Tool: "t", Outcome: outcome.Success,
				Attempt: 1 + int(ops[i]/5%3), Round: i, Fingerprint: prints[int(ops[i+1])%len(prints)],
			}
			require.NoError(t, m.Append(ctx, "r", r))
			if k := (key{r.CallID, r.Attempt}); !seen[k] {
				seen[k] = true
				if r.Fingerprint != "" {
					if ids[r.Fingerprint] == nil {
						ids[r.Fingerprint] = map[string]bool{}
					}
					ids[r.Fingerprint][r.CallID] = true
					last[r.Fingerprint] = r
				}
			}
		}
		for _, fp := range prints {
			n, got, err := m.Executions(ctx, "r", fp)
			require.NoError(t, err)
			if n != len(ids[fp]) {
				t.Fatalf("Executions(%q) = %d after %v; want %d", fp, n, ops, len(ids[fp]))
			}
			if n > 0 && (got.CallID != last[fp].CallID || got.Round != last[fp].Round) {
				t.Fatalf("Executions(%q) latest = %+v; want %+v", fp, got, last[fp])
			}
		}
	})
}
