// Command sitebuilder runs reactguard's sitebuilder story (package
// examples/sitebuilder/story of the core module) against a real model
// behind the Anthropic Messages API, or any server that speaks it.
//
// The user asks for a website. The model may list the websites and spaces
// (reads), calls the write tool create_site, is told the write needs the
// user's approval (DEFERRED APPROVAL_REQUIRED), asks for it with
// builtin_node_approval, and the run suspends. The program asks you (or
// approves when stdin is not a terminal), resumes the JSON snapshot in a
// new loop value, as a new process would, and the model finishes.
//
// Set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a compatible server)
// to run it; without either the program explains what to set and exits 0:
//
//	ANTHROPIC_API_KEY=sk-ant-... go run ./examples/sitebuilder
//	ANTHROPIC_BASE_URL=http://localhost:8080/ ANTHROPIC_MODEL=my-model go run ./examples/sitebuilder
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

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/reactguard/reactguard/adapters/anthropic"
	"github.com/reactguard/reactguard/examples/sitebuilder/story"
)

// defaultModel is used when ANTHROPIC_MODEL is not set.
const defaultModel = sdk.ModelClaudeHaiku4_5

const help = `sitebuilder runs the reactguard sitebuilder story against the Anthropic Messages
API. Nothing was run because neither ANTHROPIC_API_KEY nor ANTHROPIC_BASE_URL is set.

Set:
  ANTHROPIC_API_KEY   the key (https://console.anthropic.com/)
  ANTHROPIC_BASE_URL  optional: a server that speaks the Messages API
                      (default https://api.anthropic.com)
  ANTHROPIC_MODEL     optional: the model name (default ` + defaultModel + `)

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
	baseURL, key := getenv("ANTHROPIC_BASE_URL"), getenv("ANTHROPIC_API_KEY")
	if baseURL == "" && key == "" {
		_, _ = fmt.Fprint(stdout, help)
		return 0
	}
	baseURL = cmp.Or(baseURL, "https://api.anthropic.com")
	key = cmp.Or(key, "unused") // a local compatible server ignores it; the SDK wants one
	name := cmp.Or(getenv("ANTHROPIC_MODEL"), defaultModel)
	client := sdk.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(key))
	cfg.Model = anthropic.New(client, name, &anthropic.Options{MaxTokens: 2048})
	cfg.In, cfg.Interactive, cfg.Out, cfg.View = stdin, interactive, stdout, story.Conversation
	_, _ = fmt.Fprintf(stdout, "model %s at %s\n", name, baseURL)
	_, err = story.Run(ctx, cfg)
	return story.Exit(stderr, err)
}
