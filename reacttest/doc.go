// Package reacttest helps library users test their own agents offline: a
// scripted [react.Model] that replays fixed turns or computes them from the
// conversation so far, and fake tools that succeed, fail with a given kind,
// time out, fail inside a successful body, return nothing, or panic, each
// counting its executions.
//
// # Scripted models
//
// [Script] replays fixed turns in order; [Steps] mixes fixed turns
// ([Reply]) with turns computed from the request ([Step]); [Func] computes
// every turn. Build turns with [Calls], [Call] and [Text]:
//
//	m := reacttest.Script(
//		reacttest.Calls(reacttest.Call("c1", "list_spaces", `{}`)),
//		reacttest.Calls(reacttest.Call("c2", "builtin_node_finish", `{"summary":"done"}`)),
//	)
//
// A model asked for a turn past the end of its script returns an error
// wrapping [ErrScriptExhausted] that names the turn, so a test whose agent
// loops longer than expected fails clearly instead of hanging. Every request
// is recorded (deep-copied, since the loop reuses its slices) and available
// from [Model.Requests]; [LastToolMessages] and [ToolMessage] read the tool
// results a request carries, for reactive steps and for assertions.
//
// # Streaming models
//
// [Stream] returns a [react.StreamModel] that streams scripted turns
// ([StreamTurn]): the chunks a test chose, with their boundaries, and an
// optional error after them (a connection cut mid-call, an in-band error).
// [Split] cuts a turn into fragments of a given size, a call's arguments
// included, so that a test can check what the loop does with a call split
// across many chunks; [StreamModel.Sent] counts the chunks delivered, so a
// test can check that a slow reader paces the model. [Streaming] makes any
// model (a scripted [Model] included) stream its answers through Split.
//
// # Fake tools
//
// The constructors [Succeed], [Respond], [Fail], [FailWith], [Timeout],
// [BusinessFail], [Empty] and [Panic] return a [*Fake] whose Tool field is
// a ready [*tool.Tool] (read-only effect and an open object input schema
// unless changed) to add to a [tool.Catalog]. Adjust the tool's fields
// (Effect, InputSchema, Params, Contract, ...) before adding it to a
// catalog; the catalog reads them once. [Fake.Executions] counts the times
// the tool's function ran, so a test can assert that a write executed
// exactly once; [Fake.Requests] returns what it was called with.
//
// # Concurrency
//
// A [Model] and a [Fake] are safe for concurrent use; a model serves one
// run at a time in a meaningful way, since its turns are consumed in the
// order they are requested.
package reacttest
