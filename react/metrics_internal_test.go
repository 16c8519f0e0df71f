package react

import (
	"context"
	"errors"
	"hash/fnv"
	"strconv"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/tool"
)

// openRuns keeps the runs started here until they end, with what they
// did: the first suspension, the first of each kind, and whether a run
// was open at all.
func TestOpenRuns(t *testing.T) {
	var o openRuns
	if before, tracked := o.mark("r", openApproval); tracked || before != 0 {
		t.Fatalf("mark of a run never started = %d, %v; want 0, false", before, tracked)
	}
	if o.end("r") {
		t.Fatal("end of a run never started = true; want false")
	}
	o.start("r")
	steps := []struct {
		kind   uint8
		before uint8
		why    string
	}{
		{openFollowUp, 0, "the first suspension: no flag before"},
		{openFollowUp, openFollowUp | openSuspended, "a second follow-up"},
		{openApproval, openFollowUp | openSuspended, "the first approval"},
		{0, openFollowUp | openApproval | openSuspended, "a suspension of another kind"},
	}
	for _, st := range steps {
		before, tracked := o.mark("r", st.kind)
		if !tracked || before != st.before {
			t.Errorf("%s: mark = %b, %v; want %b, true", st.why, before, tracked, st.before)
		}
	}
	if !o.end("r") || o.end("r") {
		t.Error("end reports the run open once, then forgets it")
	}
	if _, tracked := o.mark("r", openApproval); tracked {
		t.Error("a run that ended is not open")
	}

	// Past the bound, starting a run forgets one: never more than
	// maxOpenRuns are kept.
	var full openRuns
	for i := range maxOpenRuns {
		full.start(strconv.Itoa(i))
	}
	if len(full.runs) != maxOpenRuns {
		t.Fatalf("%d runs open; want %d", len(full.runs), maxOpenRuns)
	}
	full.start("one more")
	if len(full.runs) != maxOpenRuns {
		t.Errorf("%d runs open after one more; want %d (one forgotten)", len(full.runs), maxOpenRuns)
	}
	if _, tracked := full.mark("one more", openApproval); !tracked {
		t.Error("the newest run is kept")
	}
	full.start("one more") // started again: its flags start over, nothing is forgotten
	if len(full.runs) != maxOpenRuns {
		t.Errorf("%d runs open; want %d", len(full.runs), maxOpenRuns)
	}
}

// resultDigest is FNV-1a 64 of the result's JSON; a result that does not
// encode digests as an empty one.
func TestResultDigest(t *testing.T) {
	for _, b := range [][]byte{nil, []byte(`{"balance":500}`), []byte(`{"balance":600}`)} {
		h := fnv.New64a()
		_, _ = h.Write(b)
		if got := resultDigest(b, nil); got != h.Sum64() {
			t.Errorf("resultDigest(%s) = %x; want FNV-1a %x", b, got, h.Sum64())
		}
	}
	if resultDigest([]byte(`{"a":1}`), errors.New("x")) != resultDigest(nil, nil) {
		t.Error("a result that does not encode digests as empty")
	}
	if resultDigest([]byte(`1`), nil) == resultDigest([]byte(`2`), nil) {
		t.Error("two results share a digest")
	}
}

// restoreEvidenced rebuilds, from the reports in order, the digest of each
// fingerprint's last result since the last write: a write that ran clears
// them, a report without a digest (or a built-in call, or a call that did
// not run) adds none.
func TestRestoreEvidenced(t *testing.T) {
	read := &tool.Tool{Name: "read", Effect: tool.Read, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil }}
	write := &tool.Tool{Name: "write", Effect: tool.Write, InputSchema: &jsonschema.Schema{Type: "object"},
		Func: func(context.Context, tool.Request) (any, error) { return nil, nil }}
	l, err := New(Config{Model: ModelFunc(func(context.Context, Request) (Response, error) { return Response{}, nil }), Tools: tool.MustCatalog(read, write)})
	if err != nil {
		t.Fatal(err)
	}
	const a, b, c, d = "0000000000000000000000000000000a", "0000000000000000000000000000000b", "0000000000000000000000000000000c", "0000000000000000000000000000000d"
	ran := func(toolName, fp, digest string, business BusinessStatus) CallReport {
		return CallReport{Tool: toolName, Fingerprint: fp, ResultDigest: digest, Layers: Layers{Attempts: 1, Business: business}}
	}
	r := &run{l: l, calls: []CallReport{
		ran("read", a, "1", BusinessEvidence),
		ran("write", "", "", BusinessEvidence),                                             // a write ran: a is judged anew
		ran("read", b, "2", BusinessEvidence),                                              // kept
		ran("read", c, "", BusinessInsufficient),                                           // no digest
		ran("read", d, "zz", BusinessEvidence),                                             // not a digest
		{Tool: "read", Fingerprint: a, ResultDigest: "1"},                                  // did not run
		{Tool: "builtin_node_finish", Builtin: true, ResultDigest: "1"},                    // built-in
		{Tool: "write", Layers: Layers{Execution: ExecReused, Business: BusinessRepeated}}, // reused: did not run, clears nothing
	}}
	r.restoreEvidenced()
	if n := r.evidenced.Len(); n != 1 {
		t.Fatalf("%d fingerprints restored; want 1 (b)", n)
	}
	if r.evidenced.Swap(b, 2) {
		t.Error("b's digest 2 was not restored")
	}
	for _, fp := range []string{a, c, d} {
		if !r.evidenced.Swap(fp, 1) {
			t.Errorf("%s was restored; want it judged anew", fp)
		}
	}
}
