// Package eval is the evaluation harness of seed 003: a set of labelled
// tasks in six categories, run through the real loop and guards against a
// model, scored layer by layer before the final task, and reported by
// category and layer with the denominators shown.
//
//	rep, err := eval.Run(ctx, eval.Builtin(), eval.Options{})   // the scripted models
//	rep.Markdown(os.Stdout)
//
//	rep, err = eval.Run(ctx, eval.Builtin(), eval.Options{
//		Model:     func(*eval.Case) react.Model { return myModel },
//		ModelName: "my-model",
//	})
//
// From the command line: go run ./eval/cmd/rgeval (make eval) for the
// scripted models; cd adapters/openai && go run ./cmd/rgeval -model openai
// for any OpenAI-compatible endpoint. docs/evaluation.md defines every
// figure and the case format.
//
// # Cases
//
// A [Case] is a JSON file (the built-in ones are under eval/cases,
// embedded in the package; [Load] reads a directory of your own): the
// user's words, the node, fake tools that answer from data (results,
// typed failures, business failures inside a 200 body, a response
// contract, a retry policy, a verifier for uncertain writes), the
// decisions a human gives when the run suspends, a scripted model that
// behaves well, the labels, and misbehaving variants of the script.
//
// The categories are the seed's six: normal success; protocol failure
// (unknown tool, missing or malformed arguments, an unpaired call, an
// invented parameter); execution failure (timeout, rate limit, changed
// response shape, missing resource); executed but business not met
// (empty, irrelevant or incomplete result, a business refusal); permission
// and side effects (semantically right but must not execute); final
// integration (the tool gave the right facts, the answer must carry them).
//
// # Labels and scoring
//
// Each case labels calls of the model (the n-th call of a tool) with the
// statuses the runtime must give them in each layer — call status,
// execution status, attempts and first attempt, business status, verdict
// and code — and the next steps allowed after them; it lists the
// unacceptable behaviours to watch ([Behaviour]: fabricating on an empty
// result, retrying a forbidden call, resubmitting an uncertain write,
// repeating an identical call, ignoring or altering the tools' facts); and
// it states the final task: how the run ends, its goal status, output
// values, facts the answer must carry, how often each tool executed.
//
// Scoring follows the seed's order: first whether each layer's status was
// judged as labelled, then the agent's next steps and behaviours, then the
// final task ([CaseResult]). A case passes end to end when all of them
// do. The [Report] counts cases per category and column, with the
// denominators, and adds react.Metrics' figures over the same runs.
//
// # Models
//
// The zero [Options] runs each case with its own script. A real model
// runs the same cases; labels of the script's deliberate mistakes
// (CallLabel.ScriptOnly: a misspelt tool, malformed arguments) and labels
// of calls the model never made count as not exercised, shown apart from
// the checks. Runs are deterministic for the scripted model: fixed run
// ids, a fixed clock, retries without delay.
package eval
