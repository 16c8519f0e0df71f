// Package fingerprint gives tool calls a stable identity: the canonical
// form of their JSON arguments and a short hash of tool name plus canonical
// arguments.
//
// The fingerprint guard counts repeated calls by it, the write gate binds
// approvals and idempotency keys to it, and the evidence ledger files
// records under it, so arguments that mean the same thing must share one.
//
// # Canonical form
//
// [Canonical] parses exactly one JSON value (RFC 8259) and writes it back
// with these rules:
//
//   - no insignificant whitespace;
//   - object members sorted by their canonical key bytes (byte-wise, which
//     for UTF-8 is code-point order); of duplicate keys only the last is
//     kept, the value a JSON decoder would use;
//   - strings escape only the quote, the backslash and control characters
//     (\b \f \n \r \t, otherwise \u00xx in lower case); every other
//     character, \u escapes and "\/" included, is written as literal UTF-8;
//     invalid UTF-8 bytes and lone surrogates become U+FFFD, as
//     encoding/json decodes them;
//   - numbers are written by value, exactly: numerically equal numbers
//     have one form (1, 1.0, 1.00, 1e0, 10E-1 and 0.1e1 are all 1; -0 is
//     0), computed on the decimal digits, never through float64, so no
//     digit is lost however long the number or large its exponent
//     (9007199254740993 and 9007199254740992 stay apart, and so do
//     1e1000000000000000000000 and 1e1000000000000000000001). The form is
//     ECMAScript's (plain digits while the decimal point is within 21
//     digits of the number's start and at most 6 zeros after it, otherwise
//     d.ddde±x) with every significant digit kept: 100, 1.5, 0.000001,
//     1e-7, 1e21, 1.2345678901234567890123e22;
//   - true, false and null as they are.
//
// The form is idempotent: Canonical(Canonical(x)) == Canonical(x) for every
// valid x. Nesting deeper than [MaxDepth] is refused.
//
// What is not equated: a number and a string that spells it (1 and "1"),
// strings that differ only in letter case or Unicode normalisation (é as
// one code point or two), arrays in another order, an absent key and a key
// whose value is null, and 1.0000000000000000000001 and 1 (numbers are
// equal only when their values are). Tools whose arguments mean the same
// thing in more ways than these must fingerprint them themselves.
//
// # Fingerprints
//
// [Of] hashes the length-prefixed tool name and the canonical arguments with
// SHA-256 and returns the first 128 bits as [Size] hex characters. Empty or
// blank arguments count as {}.
//
// # Errors and concurrency
//
// Input that is not JSON never panics: it yields a [*SyntaxError] wrapping
// [ErrInvalidJSON]. All functions are safe for concurrent use; buffers are
// pooled, so [Of] allocates only its result.
package fingerprint
