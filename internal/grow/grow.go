// Package grow appends to the long append-only slices of a run (its
// messages, its call reports, its evidence records) with room doubled each
// time the slice is full, or made at once as large as the previous run's.
//
// append doubles a small slice, but grows one of 256 elements or more by
// less and less, down to a quarter at a time, so a slice appended one
// element at a time to n elements has allocated four to five times n
// elements by then (measured: 3.98 at n = 4,000, 5.17 at 10,000) and
// copied most of them. For the slices that hold a run's history, that
// garbage is most of what a long run allocates. Doubling allocates less
// than four times n (1.91 at 4,000, 3.58 at 10,000), in fewer copies; a
// hint that is right (the length the previous run of the same kind
// reached) allocates n and 256 more, in one copy of 256 elements.
// Short slices grow as append grows them, from one element, so a short
// run does not pay for room it never uses, whatever its hint.
package grow

import "slices"

// doubleFrom is the capacity from which Append doubles on its own;
// below it, append already doubles.
const doubleFrom = 256

// Append appends v to s, doubling its capacity when it is full.
func Append[T any](s []T, v T) []T { return AppendHint(s, v, 0) }

// AppendHint appends v to s. When s is full and holds doubleFrom (256)
// elements or more, its capacity becomes hint when that is more than
// double its length, and double its length otherwise. A slice that never
// reaches 256 elements is never grown to hint, so a wrong hint costs only
// the runs that are long themselves, and at most hint elements of room.
func AppendHint[T any](s []T, v T, hint int) []T {
	if len(s) == cap(s) && cap(s) >= doubleFrom {
		s = slices.Grow(s, max(len(s), hint-len(s)))
	}
	return append(s, v)
}
