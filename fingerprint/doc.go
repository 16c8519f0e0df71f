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
//   - numbers are kept exactly as written (they are validated, not
//     reformatted: 1.0 and 1 stay different, so a tool that cares about the
//     literal sees what the model sent, and no precision is lost);
//   - true, false and null as they are.
//
// The form is idempotent: Canonical(Canonical(x)) == Canonical(x) for every
// valid x. Nesting deeper than [MaxDepth] is refused.
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
