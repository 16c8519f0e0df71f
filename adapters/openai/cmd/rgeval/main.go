// Command rgeval runs reactguard's evaluation set (the labelled cases in
// six categories of docs/evaluation.md, package eval of the core module)
// against a real model behind any OpenAI-compatible endpoint — OpenAI
// itself, or a local Ollama, vLLM, LM Studio or llama.cpp server — and
// prints the same report as the scripted run: by category and layer, with
// denominators, then the cases that did not pass and the runtime's
// metrics.
//
// Set OPENAI_BASE_URL to run it; without it the program explains what to
// set and exits 0:
//
//	OPENAI_BASE_URL=http://localhost:11434/v1/ OPENAI_MODEL=qwen3:8b go run ./cmd/rgeval -model openai
//	OPENAI_BASE_URL=https://api.openai.com/v1/ OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-4.1-mini go run ./cmd/rgeval -model openai -json report.json
//
// -model scripted runs each case's own script instead (no endpoint
// needed); -cases dir runs your own cases; -judge openai also has a model
// review every final answer against the evidence with eval.DefaultRubric
// (OPENAI_JUDGE_MODEL, default OPENAI_MODEL), reported apart from the
// deterministic checks; -h lists every flag (they are eval.Command's).
package main

import (
	"cmp"
	"context"
	"io"
	"os"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/reactguard/reactguard/adapters/openai"
	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/react"
)

// defaultModel is used when OPENAI_MODEL is not set: a small local model
// with tool calling, as pulled by `ollama pull qwen3:8b`.
const defaultModel = "qwen3:8b"

const help = `rgeval runs the reactguard evaluation set against an OpenAI-compatible chat
completions endpoint. Nothing was run because OPENAI_BASE_URL is not set.

Set:
  OPENAI_BASE_URL  the endpoint, e.g. http://localhost:11434/v1/ (Ollama),
                   http://localhost:8000/v1/ (vLLM), https://api.openai.com/v1/
  OPENAI_MODEL     the model name (default ` + defaultModel + `); it must support tool calls
  OPENAI_API_KEY   the key, if the endpoint needs one (local servers usually do not)
  OPENAI_JUDGE_MODEL  the model that reviews the answers with -judge openai
                   (default OPENAI_MODEL)

Then:
  go run ./cmd/rgeval -model openai [-json report.json] [-category business_unmet] [-cases dir]

Without an endpoint, -model scripted runs every case with its own scripted model.
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the program; it returns the exit code (see eval.Command.Run).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return command(getenv).Run(ctx, args, stdout, stderr)
}

// command is the evaluation command with the openai model.
func command(getenv func(string) string) eval.Command {
	model := func(name string) (react.Model, string, error) {
		base := getenv("OPENAI_BASE_URL")
		if base == "" {
			return nil, "", eval.Unconfigured(help)
		}
		key := cmp.Or(getenv("OPENAI_API_KEY"), "unused") // local servers ignore it; the SDK wants one
		client := oai.NewClient(option.WithBaseURL(base), option.WithAPIKey(key))
		return openai.New(client, name, nil), name + " at " + base, nil
	}
	return eval.Command{
		Name:         "rgeval",
		DefaultModel: "openai",
		Models: map[string]eval.ModelFactory{
			"openai": func(context.Context) (react.Model, string, error) {
				return model(cmp.Or(getenv("OPENAI_MODEL"), defaultModel))
			},
		},
		Judges: map[string]eval.JudgeFactory{
			"openai": func(context.Context) (eval.Judge, string, error) {
				m, name, err := model(cmp.Or(getenv("OPENAI_JUDGE_MODEL"), getenv("OPENAI_MODEL"), defaultModel))
				if err != nil {
					return nil, "", err
				}
				return eval.ModelJudge(m), name, nil
			},
		},
	}
}
