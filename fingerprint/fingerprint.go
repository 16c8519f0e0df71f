package fingerprint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
)

// Size is the length in characters of a fingerprint returned by [Of]: the
// first 16 bytes (128 bits) of a SHA-256, in lower-case hex.
const Size = 32

// Of returns the fingerprint of a call of tool with args: the hex SHA-256
// (truncated to [Size] characters) of the tool name and the canonical form
// of args. Arguments that differ only in key order, whitespace, string
// escaping, duplicate keys or the spelling of equal numbers (1, 1.0, 1e0)
// share a fingerprint; different tools never do
// for the same arguments (the name is length-prefixed). Empty args, or args
// of only whitespace, count as the empty object {} (a model calling a tool
// without parameters sends either). Args that are not JSON yield "" and an
// error wrapping [ErrInvalidJSON]. Of is safe for concurrent use and
// allocates only the returned string.
func Of(tool string, args json.RawMessage) (string, error) {
	c := getCanon()
	buf := c.scratchOf()
	buf = binary.AppendUvarint(buf, uint64(len(tool)))
	buf = append(buf, tool...)
	var err error
	if isBlank(args) {
		buf = append(buf, '{', '}')
	} else {
		buf, err = c.run(buf, args)
	}
	if err != nil {
		c.keepOf(buf)
		putCanon(c)
		return "", err
	}
	sum := sha256.Sum256(buf)
	c.keepOf(buf)
	putCanon(c)
	var h [Size]byte
	hex.Encode(h[:], sum[:Size/2])
	return string(h[:]), nil
}

// scratchOf returns the pooled output buffer Of writes into.
func (c *canon) scratchOf() []byte { return c.ofBuf[:0] }

// keepOf keeps buf for the next Of unless it grew too large to pool.
func (c *canon) keepOf(buf []byte) {
	if cap(buf) > maxPooled {
		buf = nil
	}
	c.ofBuf = buf
}

func isBlank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}
