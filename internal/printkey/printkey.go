// Package printkey indexes fingerprints by the 16 bytes they spell.
//
// A fingerprint of fingerprint.Of's form is 32 lower-case hex digits. As
// a map key, its string makes every lookup read the key's bytes elsewhere
// in memory and makes the map one the garbage collector scans; the 16
// bytes it spells, kept in the map itself, do neither. The maps of a long
// run (thousands of calls) are where that shows. Fingerprints of another
// form (a host's own) are indexed by their string, apart.
package printkey

// Key is a fingerprint of fingerprint.Of's form as the 16 bytes it spells.
type Key [16]byte

// Parse returns the Key of fp when fp is 32 lower-case hex digits. Upper
// case is not read, so that two fingerprints that differ never share a
// key.
func Parse(fp string) (k Key, ok bool) {
	if len(fp) != 2*len(k) {
		return k, false
	}
	_ = fp[2*len(k)-1]
	var bad byte
	for i := range k {
		hi, lo := unhex[fp[2*i]], unhex[fp[2*i+1]]
		bad |= hi | lo
		k[i] = hi<<4 | lo
	}
	return k, bad < 16
}

// unhex is the value of each lower-case hex digit, and 0xff for every
// other byte: Parse ORs the values it reads, so one test at the end finds
// any byte that is not a digit, without a branch per byte.
var unhex = func() (t [256]byte) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		default:
			t[c] = 0xff
		}
	}
	return t
}()

// Set is a set of fingerprints. The zero Set is empty and ready to use;
// its maps are made when first written.
type Set struct {
	keys   map[Key]struct{}
	others map[string]struct{}
	hint   int
}

// NewSet returns an empty set whose map of keys is made with room for
// hint fingerprints when the first is added.
func NewSet(hint int) Set { return Set{hint: hint} }

// Add adds fp and reports whether it was not in the set.
func (s *Set) Add(fp string) bool {
	if k, ok := Parse(fp); ok {
		if s.keys == nil {
			s.keys = make(map[Key]struct{}, s.hint)
		}
		n := len(s.keys)
		s.keys[k] = struct{}{}
		return len(s.keys) > n
	}
	if s.others == nil {
		s.others = make(map[string]struct{})
	}
	n := len(s.others)
	s.others[fp] = struct{}{}
	return len(s.others) > n
}

// Has reports whether fp is in the set.
func (s *Set) Has(fp string) bool {
	if k, ok := Parse(fp); ok {
		_, has := s.keys[k]
		return has
	}
	_, has := s.others[fp]
	return has
}

// Len returns the number of fingerprints in the set.
func (s *Set) Len() int { return len(s.keys) + len(s.others) }

// Digests maps fingerprints to a 64-bit digest (of the result a call with
// that fingerprint gave, say), keyed as [Set] keys them. The zero Digests
// is empty and ready to use; its maps are made when first written.
type Digests struct {
	keys   map[Key]uint64
	others map[string]uint64
	hint   int
}

// NewDigests returns an empty Digests whose map of keys is made with room
// for hint fingerprints when the first is stored.
func NewDigests(hint int) Digests { return Digests{hint: hint} }

// Swap stores d as the digest of fp and reports whether it changed: fp had
// no digest, or another one.
func (s *Digests) Swap(fp string, d uint64) (changed bool) {
	if k, ok := Parse(fp); ok {
		if s.keys == nil {
			s.keys = make(map[Key]uint64, s.hint)
		}
		old, had := s.keys[k]
		s.keys[k] = d
		return !had || old != d
	}
	if s.others == nil {
		s.others = make(map[string]uint64)
	}
	old, had := s.others[fp]
	s.others[fp] = d
	return !had || old != d
}

// Clear removes every fingerprint, keeping the maps' room.
func (s *Digests) Clear() {
	clear(s.keys)
	clear(s.others)
}

// Len returns the number of fingerprints with a digest.
func (s *Digests) Len() int { return len(s.keys) + len(s.others) }
