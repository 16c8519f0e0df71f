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
