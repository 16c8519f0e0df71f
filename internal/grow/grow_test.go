package grow

import "testing"

func TestAppend(t *testing.T) {
	tests := []struct {
		n       int
		maxCaps int // the number of distinct capacities on the way to n
		why     string
	}{
		{1, 1, "the first element allocates room for one"},
		{8, 4, "a short slice doubles from one, as append does"},
		{10000, 15, "ten thousand elements take about log2(10000) allocations, not the ~25 of append's slowing growth"},
	}
	for _, tt := range tests {
		var s []int
		caps := 0
		allocated := 0
		for i := range tt.n {
			before := cap(s)
			s = Append(s, i)
			if cap(s) != before {
				caps++
				allocated += cap(s)
			}
		}
		if caps > tt.maxCaps {
			t.Errorf("%s: %d capacities on the way to %d elements; want at most %d", tt.why, caps, tt.n, tt.maxCaps)
		}
		if allocated > 4*tt.n {
			t.Errorf("%s: %d elements allocated for %d; want at most 4×", tt.why, allocated, tt.n)
		}
		for i, v := range s {
			if v != i {
				t.Fatalf("%s: s[%d] = %d", tt.why, i, v)
			}
		}
	}
}

func TestAppendKeepsSpareCapacity(t *testing.T) {
	s := make([]int, 300, 600)
	if r := Append(s, 1); &r[300] != &s[:301][300] {
		t.Error("Append reallocated a slice that had room")
	}
}

func TestAppendHint(t *testing.T) {
	tests := []struct {
		n, hint     int
		maxCaps     int // the number of distinct capacities on the way to n
		maxAlloc    int // elements allocated on the way to n, at most
		wantCapOver int // cap(s) at n is at least this
		why         string
	}{
		// Up to 256 elements, append's growth from 1 allocates 511.
		{200, 5000, 9, 511, 200, "a short slice grows as append grows it: a long hint is not paid for before 256 elements"},
		{4000, 4000, 10, 511 + 4000 + 96, 4000, "a right hint: one step from 256 to the hint (and its size class)"},
		{6000, 4000, 11, 511 + 4096 + 9216, 6000, "a short hint: from the hint on, doubling (append makes 8,192 needed elements 9,216)"},
		{300, 8000, 10, 511 + 8000 + 192, 8000, "a long run shorter than its hint has the hint's room (the bound is the hint)"},
		{4000, 100, 14, 4 * 4000, 4000, "a hint below 512 is doubling"},
	}
	for _, tt := range tests {
		var s []int
		caps, allocated := 0, 0
		for i := range tt.n {
			before := cap(s)
			s = AppendHint(s, i, tt.hint)
			if cap(s) != before {
				caps++
				allocated += cap(s)
			}
		}
		if caps > tt.maxCaps {
			t.Errorf("%s: %d capacities on the way to %d elements; want at most %d", tt.why, caps, tt.n, tt.maxCaps)
		}
		if allocated > tt.maxAlloc {
			t.Errorf("%s: %d elements allocated for %d; want at most %d", tt.why, allocated, tt.n, tt.maxAlloc)
		}
		if cap(s) < tt.wantCapOver {
			t.Errorf("%s: cap %d; want at least %d", tt.why, cap(s), tt.wantCapOver)
		}
		for i, v := range s {
			if v != i {
				t.Fatalf("%s: s[%d] = %d", tt.why, i, v)
			}
		}
	}
}
