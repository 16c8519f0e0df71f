package react

import (
	"errors"
	"hash/fnv"
	"strconv"
	"testing"
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
