// Command sitebuilder runs reactguard's sitebuilder story (package
// examples/sitebuilder/story of the core module) against a real model
// behind any OpenAI-compatible endpoint: OpenAI itself, or a local Ollama,
// vLLM, LM Studio or llama.cpp server.
//
// The user asks for a website. The model may list the websites and spaces
// (reads), calls the write tool create_site, is told the write needs the
// user's approval (DEFERRED APPROVAL_REQUIRED), asks for it with
// builtin_node_approval, and the run suspends. The program asks you (or
// approves when stdin is not a terminal), resumes the JSON snapshot in a
// new loop value, as a new process would, and the model finishes.
//
// Set OPENAI_BASE_URL to run it; without it the program explains what to
// set and exits 0:
//
//	OPENAI_BASE_URL=http://localhost:11434/v1/ OPENAI_MODEL=qwen3:8b go run ./examples/sitebuilder
//	OPENAI_BASE_URL=https://api.openai.com/v1/ OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-4.1-mini go run ./examples/sitebuilder
//
// Flags: -approve / -decline answer the approval without asking; -lang zh
// speaks Chinese to the model; -log prints the loop's structured events;
// -timeout bounds the whole run.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/reactguard/reactguard/adapters/openai"
	"github.com/reactguard/reactguard/examples/sitebuilder/story"
)

// defaultModel is used when OPENAI_MODEL is not set: a small local model
// with tool calling, as pulled by `ollama pull qwen3:8b`.
const defaultModel = "qwen3:8b"

const help = `sitebuilder runs the reactguard sitebuilder story against an OpenAI-compatible
chat completions endpoint. Nothing was run because OPENAI_BASE_URL is not set.

Set:
  OPENAI_BASE_URL  the endpoint, e.g. http://localhost:11434/v1/ (Ollama),
                   http://localhost:8000/v1/ (vLLM), https://api.openai.com/v1/
  OPENAI_MODEL     the model name (default ` + defaultModel + `); it must support tool calls
  OPENAI_API_KEY   the key, if the endpoint needs one (local servers usually do not)

Then:
  go run ./examples/sitebuilder ` + story.Synopsis + `
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, story.IsTerminal(os.Stdin), os.Stdout, os.Stderr))
}

// run is the program; it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, interactive bool, stdout, stderr io.Writer) int {
	cfg, err := story.ParseFlags(args, stderr)
	if err != nil {
		return story.Exit(stderr, err)
	}
	baseURL := getenv("OPENAI_BASE_URL")
	if baseURL == "" {
		_, _ = fmt.Fprint(stdout, help)
		return 0
	}
	name := cmp.Or(getenv("OPENAI_MODEL"), defaultModel)
	key := cmp.Or(getenv("OPENAI_API_KEY"), "unused") // local servers ignore it; the SDK wants one
	client := oai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(key))
	cfg.Model = openai.New(client, name, nil)
	cfg.In, cfg.Interactive, cfg.Out, cfg.View = stdin, interactive, stdout, story.Conversation
	_, _ = fmt.Fprintf(stdout, "model %s at %s\n", name, baseURL)
	_, err = story.Run(ctx, cfg)
	return story.Exit(stderr, err)
}
