// Package prompt holds every text the runtime shows a model, one catalog per
// language.
//
// # What is in a catalog
//
//   - Reasons: what happened, never advice. Each [errcode.Code] has a reason
//     template ([Catalog.Reason]); a few situations without a code have a
//     reason key of their own (the Reason* keys). The Detail* keys fill a
//     reason's {detail} when a tool's error carries nothing written for
//     the model ([DetailWithheld], [DetailDeadline]).
//   - Next steps: advice only (the Next* keys, the specification's NEXT_*).
//   - Results of control tools that succeeded (the Result* keys).
//   - The ReAct system prompt rules of §7.3 ([SystemRules]) and the phase hint
//     of §7.4 ([Catalog.PhaseHint]), which states contract facts only: nothing
//     when no output is required, otherwise the required keys not yet
//     written, or that all are written. It never guesses progress.
//   - The message format "<reason>. Next: <next>" ([Catalog.Message]).
//
// [English] is the default; [Chinese] follows the specification's wording. A
// catalog is chosen per loop. Catalogs are immutable and safe for concurrent
// use.
//
// # Placeholders
//
// Templates name their values in braces, {tool}, and are filled by
// [Catalog.Text] and [Catalog.Reason] from key/value pairs. Both catalogs use
// the same placeholders for the same key; a test enforces it. A placeholder
// without a value is left as written, so a missing value is visible rather
// than silently dropped.
//
// Texts are API: changing one is a breaking change, and golden files in
// testdata pin every rendered text (go test ./prompt -update rewrites them).
package prompt
