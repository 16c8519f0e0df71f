// Package acceptance holds the specification's acceptance table (§9 of
// the tool observation and node progress specification) as end-to-end
// tests, and the loop's benchmarks. It has no API: everything is in its
// _test.go files, which drive the loop only through the public API
// (react.New, Loop.Run, Loop.Resume) with the scripted model and fake tools
// of package reacttest, and capture what the loop reports through an
// observer and a log/slog handler.
//
// # Scenarios
//
// Each scenario of §9 is one test, named after its number:
// TestScenario01_WriteDeferredThenApprovalSuspends through
// TestScenario12_DownstreamBusinessFailure. Each asserts what its row of
// the table names: the outcome and error code of the call, the exact
// reason and next-step texts of the chosen prompt catalog, the trace
// events (TOOL invoked with its outcome and level, REACT no_tool_calls,
// stall counted or reset, suspended, finished, failed) and the no-progress
// counter. Scenarios whose row is about message text also run with the
// Chinese catalog.
//
// # Benchmarks
//
// bench_test.go measures one round with 1 and with 8 tool calls, and the
// cost of a round late in a long node against an early one (see
// docs/performance.md).
package acceptance
