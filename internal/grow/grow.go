// Package grow appends to the long append-only slices of a run (its
// messages, its call reports, its evidence records) with room doubled each
// time the slice is full.
//
// append grows a slice of 256 elements or more by a quarter at a time, so
// a slice appended one element at a time to n elements has allocated about
// five times n elements by then, and copied four. For the slices that
// hold a run's history, that garbage is most of what a long run allocates,
// and the collector pays for it with the whole run's history live. Doubling
// allocates at most twice n.
package grow

import "slices"

// minRoom is the capacity of the first allocation.
const minRoom = 8

// Room returns s with room for at least one more element: s itself when it
// has room, else a copy with twice its capacity (at least minRoom).
func Room[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	return slices.Grow(s, max(len(s), minRoom))
}

// Append appends v to s, doubling its capacity when it is full.
func Append[T any](s []T, v T) []T {
	return append(Room(s), v)
}
