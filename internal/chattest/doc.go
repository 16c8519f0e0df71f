// Package chattest holds the API-neutral test support of the model
// adapters (adapters/openai, adapters/openairesponses, adapters/anthropic,
// adapters/gemini, adapters/bedrock): a canned-response HTTP
// server, helpers for requests that find no server or are stopped while
// the server holds them, and the end-to-end scenarios every adapter must
// pass. Each adapter's tests supply only what is specific to its API: the
// canned response bodies (testdata), the SDK client, and the checkers of
// its request shape. The package imports testing and testify and is
// meant to be compiled only into tests; it is internal, and the adapter
// modules may import it because their import paths lie under the core's.
//
// # Canned server
//
// [NewServer] starts an httptest server for an [Endpoint] (the path every
// request must POST to, a header check, the error body for a request
// beyond the last reply) that answers with a queue of [Reply] values
// (status, headers, body or testdata file, content type, or Hang to hold
// the request until the client gives up). It records every request body
// for [Server.Requests] and [Server.Field], is safe under -race, and is
// closed through t.Cleanup. [HTTPClient] gives the SDK a transport whose
// idle connections are closed when the test ends, so goleak stays quiet;
// [ClosedURL] is a base URL where the connection is refused.
// [CannedServer] is a one-reply server for runnable examples, which have
// no testing.T.
//
// # Stopping a held request without the wall clock
//
// [Stop] says how a test ends a request the server holds: [StopDeadline]
// fires a [ManualDeadline] and [StopCancel] cancels, each as soon as the
// server has received the request ([Server.Arrived]), so no test sleeps or
// sets a timer.
//
// # Scenarios
//
// An [Adapter] describes one adapter: its provider name, endpoint, model
// name, how to build its react.Model against a server URL, and how to
// read its API's requests (history validity, offered tool names, the text
// of a tool result). Its methods run the shared scenarios:
//
//   - [Adapter.RunApprovalLoop]: read → write (DEFERRED
//     APPROVAL_REQUIRED) → builtin_node_approval → suspend → resume with
//     react.Approve(ticket) in a new loop value and a new model → write
//     (SUCCESS, executed once) → builtin_node_finish, with the API's
//     history checker run on every request. It returns the server so the
//     adapter can check its requests further.
//   - [Adapter.RunModelErrorLoop]: a 429 mid-run interrupts the run with
//     the adapter's error and a snapshot; the resume replays the turn.
//   - [Adapter.RunErrorCases] and [Adapter.RunNoResponseCases]: tables of
//     failures that must reach the host as classified *modelerr.Error
//     values, never as a partial turn ([GenerateErr]).
//   - [Adapter.RunParseCases]: canned bodies and the turns the adapter
//     must make of them.
//   - [Adapter.RunConcurrent]: concurrent Generate calls on one model.
//   - [Adapter.RunCutOffLoop]: a turn that ended at the output limit
//     runs none of its calls (react.CutOff), answered or streamed.
//
// [Adapter.Serve] renders the canned turns as the API streams them, so
// that the loop scenarios run against a streaming model too.
//
// The loop scenarios use [SiteCatalog], [SiteNode] and [Task], and expect
// the canned turns named by [LoopReplies] in the adapter's testdata. The
// sitebuilder examples' tests replay [StoryTurns] and look for
// [StoryOutput].
//
// # Concurrency
//
// A [Server] serves any number of concurrent requests, handing out the
// replies in arrival order. Scenario methods must run on the test's
// goroutine, as testify's require does.
package chattest
