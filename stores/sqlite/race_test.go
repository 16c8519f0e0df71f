//go:build race

package sqlite_test

// raceEnabled: the race detector slows the pure-Go SQLite engine about
// tenfold; the longest tests shorten their runs under it.
const raceEnabled = true
