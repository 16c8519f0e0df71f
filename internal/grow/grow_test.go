package grow

import "testing"

func TestAppend(t *testing.T) {
	tests := []struct {
		n       int
		maxCaps int // the number of distinct capacities on the way to n
		why     string
	}{
		{1, 1, "the first element allocates the minimum room"},
		{8, 1, "the minimum room holds eight"},
		{9, 2, "the ninth doubles"},
		{10000, 12, "ten thousand elements take about log2(10000/8) allocations, not the ~30 of append's 1.25 growth"},
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
		if allocated > 4*max(tt.n, minRoom) {
			t.Errorf("%s: %d elements allocated for %d; want at most 4×", tt.why, allocated, tt.n)
		}
		for i, v := range s {
			if v != i {
				t.Fatalf("%s: s[%d] = %d", tt.why, i, v)
			}
		}
	}
}

func TestRoomKeepsSpareCapacity(t *testing.T) {
	s := make([]int, 1, 4)
	if r := Room(s); &r[:2][1] != &s[:2][1] {
		t.Error("Room reallocated a slice that had room")
	}
}
