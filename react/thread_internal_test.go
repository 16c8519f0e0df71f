package react

import "testing"

// A snapshot's thread is checked before a resume uses it: the bounds of
// its turn, of the first turn in the prompt, of the summary and of the
// token counts, each at its edge (a run of a thread's first message, a
// prompt without earlier turns, a summary of every earlier turn, token
// counts not measured yet).
func TestWireThreadCheck(t *testing.T) {
	tests := []struct {
		name   string
		w      wireThread
		ok     bool
		reason string
	}{
		{"first message", wireThread{Turn: 1, From: 1, First: -1, Last: -1}, true, "turn 1 has no earlier turn: from is turn"},
		{"no earlier turn shown", wireThread{Turn: 3, From: 3}, true, "from may be turn: every earlier turn left out"},
		{"every earlier turn shown", wireThread{Turn: 3, From: 1}, true, "from 1"},
		{"every earlier turn summarized", wireThread{Turn: 3, From: 3, Summary: "s", Summarized: 2}, true, "a summary through turn-1"},
		{"one turn summarized", wireThread{Turn: 3, From: 2, Summary: "s", Summarized: 1}, true, "a summary of turn 1"},
		{"tokens measured", wireThread{Turn: 2, From: 1, First: 0, Last: 0}, true, "zero tokens are counts"},
		{"turn 0", wireThread{Turn: 0, From: 1}, false, "turns count from 1"},
		{"from 0", wireThread{Turn: 2, From: 0}, false, "turns count from 1"},
		{"from after turn", wireThread{Turn: 2, From: 3}, false, "the prompt cannot start after the run's own turn"},
		{"negative summarized", wireThread{Turn: 2, From: 1, Summarized: -1}, false, "a negative count"},
		{"summary of the run's own turn", wireThread{Turn: 2, From: 2, Summary: "s", Summarized: 2}, false, "a summary covers earlier turns only"},
		{"summary of no turn", wireThread{Turn: 2, From: 2, Summary: "s"}, false, "a summary text covers at least one turn"},
		{"first below -1", wireThread{Turn: 2, From: 1, First: -2}, false, "-1 is the only mark of a count not measured"},
		{"last below -1", wireThread{Turn: 2, From: 1, Last: -2}, false, "-1 is the only mark of a count not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.w.ID = "t1"
			err := tt.w.check()
			if tt.ok && err != nil {
				t.Errorf("check() = %v; want nil: %s", err, tt.reason)
			}
			if !tt.ok && err == nil {
				t.Errorf("check() = nil; want an error: %s", tt.reason)
			}
		})
	}
}

// The cache of opened turns holds at most turnCacheSize turns and drops
// the oldest first; a turn put again is not a new entry.
func TestTurnCacheBound(t *testing.T) {
	key := func(i int) (k [32]byte) {
		k[0], k[1], k[2] = 1, byte(i), byte(i>>8)
		return k
	}
	var c turnCache
	turns := make([]wireTurn, turnCacheSize+2)
	for i := range turnCacheSize {
		c.put(key(i), &turns[i])
	}
	c.put(key(0), &turns[0]) // again: no entry dropped
	if len(c.m) != turnCacheSize || c.get(key(0)) != &turns[0] {
		t.Fatalf("a full cache of %d turns holds %d, turn 0: %v", turnCacheSize, len(c.m), c.get(key(0)) != nil)
	}
	c.put(key(turnCacheSize), &turns[turnCacheSize])
	c.put(key(turnCacheSize+1), &turns[turnCacheSize+1])
	for _, tt := range []struct {
		i      int
		held   bool
		reason string
	}{
		{0, false, "the oldest turn is dropped first"},
		{1, false, "then the next oldest"},
		{2, true, "the others stay"},
		{turnCacheSize - 1, true, "the others stay"},
		{turnCacheSize, true, "the new turns are held"},
		{turnCacheSize + 1, true, "the new turns are held"},
	} {
		if got := c.get(key(tt.i)); (got == &turns[tt.i]) != tt.held {
			t.Errorf("turn %d held = %v; want %v: %s", tt.i, got != nil, tt.held, tt.reason)
		}
	}
	if len(c.m) != turnCacheSize {
		t.Errorf("the cache holds %d turns; want %d", len(c.m), turnCacheSize)
	}
}
