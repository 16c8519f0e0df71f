// Command rgeval runs reactguard's evaluation set (the labelled cases in
// six categories of docs/evaluation.md) and prints the report by category
// and layer, with denominators:
//
//	go run ./eval/cmd/rgeval                 # every case with its scripted model, and its misbehaving variants
//	go run ./eval/cmd/rgeval -strict         # exit 1 unless all pass end to end and every variant is caught (make eval)
//	go run ./eval/cmd/rgeval -cases ./mycases -format json
//
// This command is part of the core module, which carries no model SDK, so
// it runs the scripted models only. To run the same set against a real
// model behind an OpenAI-compatible endpoint, use the OpenAI adapter's
// command:
//
//	cd adapters/openai && OPENAI_BASE_URL=http://localhost:11434/v1/ go run ./cmd/rgeval -model openai
//
// Run it with -h for every flag.
package main

import (
	"context"
	"errors"
	"os"

	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/react"
)

// errAdapter explains where the real models are.
var errAdapter = errors.New("real models are run by the adapter modules' command, which carries the SDK: " +
	"cd adapters/openai && go run ./cmd/rgeval -model openai")

func main() {
	os.Exit(command().Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func command() eval.Command {
	return eval.Command{
		Name: "rgeval",
		Models: map[string]eval.ModelFactory{
			"openai": func(context.Context) (react.Model, string, error) { return nil, "", errAdapter },
		},
	}
}
