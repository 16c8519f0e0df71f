// Package eval is reactguard's evaluation harness: a set of labelled tasks
// in six categories, run through the real loop and guards against a model,
// scored layer by layer (the three layers of success) before the final
// task, and reported by category and layer with the denominators shown.
// docs/evaluation.md defines every figure and the case format.
//
//	rep, err := eval.Run(ctx, eval.Builtin(), eval.Options{Variants: true}) // the scripted models, and the misbehaving ones
//	rep.Markdown(os.Stdout)
//
//	rep, err = eval.Run(ctx, eval.Builtin(), eval.Options{
//		Model:     func(*eval.Case) react.Model { return myModel },
//		ModelName: "my-model",
//		Judge:     eval.ModelJudge(reviewer), // optional: a model reviews the open claims, reported apart
//	})
//
// From the command line: go run ./eval/cmd/rgeval (make eval) for the
// scripted models and their misbehaving variants; cd adapters/openai && go
// run ./cmd/rgeval -model openai for any OpenAI-compatible endpoint.
//
// # Cases
//
// A [Case] is a JSON file (the built-in ones are under eval/cases,
// embedded in the package; [Load] reads a directory of your own): the
// user's words, the node, fake tools that answer from data (results,
// typed failures, business failures inside a 200 body, a response
// contract, a retry policy, a verifier for uncertain writes, answers that
// change once a write ran), the decisions a human gives when the run
// suspends, a scripted model that behaves well, the labels, and
// misbehaving variants of the script.
//
// The categories are six: normal success; protocol failure (unknown tool,
// missing or malformed arguments, an unpaired call, an invented
// parameter); execution failure (timeout, rate limit, changed response
// shape, missing resource); executed but business not met (empty,
// irrelevant or incomplete result, a business refusal); permission and
// side effects (semantically right but must not execute); final
// integration (the tool gave the right facts, the answer must carry them).
//
// # Labels and scoring
//
// Each case labels calls of the model (the n-th call of a tool) with the
// statuses the runtime must give them in each layer — call status,
// execution status, attempts and first attempt, business status, verdict
// and code — and the next steps allowed after them; the protocol mistakes
// its script makes on purpose; and the final task: how the run ends, its
// goal status, output values, facts the answer must carry (numbers by
// value in any format, status words not negated, entities' states),
// figures it may compute (a count over pages), whether the results are
// partial, how often each tool executed.
//
// Scoring follows the layers: first whether each layer's status was
// judged as labelled, then the agent's protocol mistakes (per case, with
// the turn where each happened), next steps and unacceptable behaviours
// ([Behaviour]: fabricating after an empty or failed call, retrying a
// forbidden call, resubmitting an uncertain write, repeating an identical
// call, ignoring or altering the facts, presenting a partial result as
// complete), then the final task ([CaseResult]). A case passes end to end
// when all of them do. The [Report] counts cases per category and column,
// with the denominators, the totals per behaviour and protocol mistake,
// react.Metrics' figures over the same runs, and for every failing case
// its transcript, final answer, ungrounded claims and side effects.
//
// # Misbehaving variants
//
// Each variant replays a misbehaving script on its case and declares what
// the runtime must still have done for the user ([Protection]): how often
// every tool executed, the statuses of the calls that matter, how the run
// ended. [Case.RunVariant] runs it through Resume and through ResumeRun;
// it passes when its behaviours are flagged exactly and the user was
// protected. make eval fails when one does not: a library change that lets
// a declined write run again or retries an uncertain write fails it even
// when every well-behaved case still passes.
//
// # Models and judges
//
// The zero [Options] runs each case with its own script. A real model
// runs the same cases; labels of the script's deliberate mistakes
// (CallLabel.ScriptOnly) do not apply to it, and labels of calls it never
// made count as not exercised, shown apart. Runs are deterministic for the
// scripted model: fixed run ids, a fixed clock, retries without delay. A
// [Judge] (off by default; [ModelJudge] with [DefaultRubric]) reviews the
// open claims code cannot check; its verdicts are reported apart and never
// change a deterministic figure.
package eval
