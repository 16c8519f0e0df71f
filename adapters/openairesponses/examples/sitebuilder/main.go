// Command sitebuilder runs reactguard's sitebuilder story (package
// examples/sitebuilder/story of the core module) against a real model
// behind the OpenAI Responses API.
//
// The user asks for a website. The model may list the websites and spaces
// (reads), calls the write tool create_site, is told the write needs the
// user's approval (DEFERRED APPROVAL_REQUIRED), asks for it with
// builtin_node_approval, and the run suspends. The program asks you (or
// approves when stdin is not a terminal), resumes the JSON snapshot in a
// new loop value, as a new process would (the reasoning items travel in
// the snapshot: no previous_response_id), and the model finishes.
//
// Set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server) to run
// it; without either the program explains what to set and exits 0:
//
//	OPENAI_API_KEY=sk-... go run ./examples/sitebuilder
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

	"github.com/reactguard/reactguard/adapters/openairesponses"
	"github.com/reactguard/reactguard/examples/sitebuilder/story"
)

// defaultModel is used when OPENAI_MODEL is not set.
const defaultModel = "gpt-5-mini"

const help = `sitebuilder runs the reactguard sitebuilder story against the OpenAI Responses
API. Nothing was run because neither OPENAI_API_KEY nor OPENAI_BASE_URL is set.

Set:
  OPENAI_API_KEY   the key (https://platform.openai.com/api-keys)
  OPENAI_BASE_URL  optional: a server that speaks the Responses API
                   (default https://api.openai.com/v1/)
  OPENAI_MODEL     optional: the model name (default ` + defaultModel + `)

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
	baseURL, key := getenv("OPENAI_BASE_URL"), getenv("OPENAI_API_KEY")
	if baseURL == "" && key == "" {
		_, _ = fmt.Fprint(stdout, help)
		return 0
	}
	baseURL = cmp.Or(baseURL, "https://api.openai.com/v1/")
	name := cmp.Or(getenv("OPENAI_MODEL"), defaultModel)
	client := oai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(cmp.Or(key, "unused")))
	cfg.Model = openairesponses.New(client, name, nil)
	cfg.In, cfg.Interactive, cfg.Out, cfg.View = stdin, interactive, stdout, story.Conversation
	_, _ = fmt.Fprintf(stdout, "model %s at %s\n", name, baseURL)
	_, err = story.Run(ctx, cfg)
	return story.Exit(stderr, err)
}
