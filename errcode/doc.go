// Package errcode defines the closed set of runtime error codes that
// reactguard attaches to every non-success observation.
//
// # What a code carries
//
// Every [Code] has
//
//   - a stable name ([Code.String], e.g. APPROVAL_TOOL_MISMATCH) used in logs,
//     messages and JSON (snapshots, reports, events);
//   - a stable numeric id (the Code's own value, e.g. 42246) that is never
//     reused, which is what the durable stores (stores/postgres,
//     stores/sqlite) persist: an integer column is as stable as the name
//     (ids are never reused or renumbered), smaller, and needs no lookup
//     table in SQL; a stored id that this version does not define reads
//     back as an invalid Code ([Code.IsValid]), never as another code;
//   - the [Layer] where the failure belongs (call, execution or business: the
//     three layers of success, docs/evaluation.md);
//   - an execution status [Class] where it has one (invalid_request,
//     forbidden, not_found, timeout, temporarily_unavailable, too_large,
//     ...);
//   - whether a retry is allowed by default ([Code.Retryable]);
//   - a reason template ([Code.Template]) that states what happened, never
//     what to do about it.
//
// # Numbering scheme
//
// An id is S*100 + n: S is the three-digit HTTP status that best describes the
// situation and n (01–99) numbers the codes within it, in the order they were
// added. The specification fixes APPROVAL_TOOL_MISMATCH at 42246: 422
// (Unprocessable Content: a well-formed call that breaks a rule) and the
// built-in tools' block 42245–42299. Ids are never reused or renumbered; a
// retired code keeps its id reserved.
//
// # Retry
//
// As in gRPC and Google AIP-194, only codes of class
// [ClassTemporarilyUnavailable] are retryable by default. A timeout is not:
// for a write, a timed-out call may have taken effect and must be verified by
// its idempotency key before anything runs again. The model never decides
// whether to retry.
//
// # Downstream codes
//
// Codes of systems a tool talks to never become a Code. They go into the
// reason text ("business failure [system.50001]: …") of a
// [ToolBusinessFailed] observation.
//
// The table in docs/errcodes.md is generated from this package by
// go generate and checked by its tests.
package errcode

//go:generate go test -run TestErrcodesDoc -update .
