// Package facts computes the index rows of an evidence record: 16-byte
// hashes of the facts [evidence.Memory] keeps in its maps (a tool that
// succeeded, a (tool, path, text) leaf, a text or word at any path), so
// that a database answers each lookup with one primary-key probe, however
// long the texts.
package facts

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/reactguard/reactguard/evidence"
)

// Size is the length of a fact's hash in bytes.
const Size = 16

// hash returns the hash of a fact of kind k with the given parts, each
// length-prefixed so that no two facts share an encoding.
func hash(k byte, parts ...string) []byte {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	h.Write([]byte{k})
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	return h.Sum(nil)[:Size]
}

// Tool is the fact "tool succeeded" ([evidence.Ledger.HasResult]).
func Tool(tool string) []byte { return hash('t', tool) }

// Value is the fact "a success of tool holds text at path"
// ([evidence.Ledger.HasValue] with a tool).
func Value(tool, path, text string) []byte { return hash('v', tool, path, text) }

// Any is the fact "a success holds text, or a word text, at some path"
// ([evidence.Ledger.HasValue] without a tool).
func Any(text string) []byte { return hash('a', text) }

// Of returns the distinct facts of a successful record of tool with
// payload, as [evidence.Memory] indexes them: the tool, and for every
// scalar leaf ([evidence.Walk]) its (tool, path, text), its text and its
// [evidence.Words]. A payload that is not JSON yields the tool only (the
// ledger refuses such records before).
func Of(tool string, payload []byte) [][]byte {
	seen := make(map[string]bool)
	out := [][]byte{Tool(tool)}
	add := func(h []byte) {
		if !seen[string(h)] {
			seen[string(h)] = true
			out = append(out, h)
		}
	}
	_ = evidence.Walk(payload, func(path, text string) bool {
		add(Value(tool, path, text))
		add(Any(text))
		for _, w := range evidence.Words(text) {
			add(Any(w))
		}
		return true
	})
	return out
}
