// Command sitebuilder is reactguard's demo: the story of the specification
// (package story). A user asks an agent to create a website. The agent
// lists the existing websites and the spaces, calls the write tool
// create_site directly, is told that the write needs the user's approval
// (DEFERRED APPROVAL_REQUIRED, which neither stalls nor fails the node),
// asks for the approval with builtin_node_approval, and the run suspends.
// The host stores the run's JSON snapshot, asks the user, and resumes the
// snapshot in a new loop value, as a new process would. On approval
// create_site runs once, the agent records the new site as the node's
// output and finishes; on decline the agent ends the node with the user's
// refusal.
//
// The model is scripted (package reacttest), so the demo runs offline, with
// no keys and no network:
//
//	go run ./examples/sitebuilder            # asks y/n on a terminal, else approves
//	go run ./examples/sitebuilder -decline   # the user declines
//	go run ./examples/sitebuilder -lang zh   # every text the model sees in Chinese
//	go run ./examples/sitebuilder -log       # also print the structured events (slog)
//
// The same story runs against a real model in the examples of the chat
// adapters (adapters/openai, adapters/anthropic), and across two processes
// with its state in a SQLite file in stores/sqlite/examples/sitebuilder
// (flag -state; the SQLite driver stays out of the core module).
package main

import (
	"context"
	"io"
	"os"

	"github.com/reactguard/reactguard/examples/sitebuilder/story"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, story.IsTerminal(os.Stdin), os.Stdout, os.Stderr))
}

// run is the program; it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, interactive bool, stdout, stderr io.Writer) int {
	cfg, err := story.ParseFlags(args, stderr)
	if err != nil {
		return story.Exit(stderr, err)
	}
	cfg.Model = story.Scripted()
	cfg.RunID = "run-1" // the same log on every run of the demo
	cfg.In, cfg.Interactive, cfg.Out = stdin, interactive, stdout
	_, err = story.Run(ctx, cfg)
	return story.Exit(stderr, err)
}
