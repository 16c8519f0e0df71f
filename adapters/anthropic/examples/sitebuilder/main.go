// Command sitebuilder runs reactguard's sitebuilder story against a real
// model behind the Anthropic Messages API, or any server that speaks it.
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
// Flags: -approve / -decline answer the approval without asking; -log
// prints the loop's structured events; -timeout bounds the whole run.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/reactguard/reactguard/adapters/anthropic"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
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
  go run ./examples/sitebuilder [-approve|-decline] [-log] [-timeout 5m]
`

const task = `Create a website called "Spring Sale" in the Marketing space.`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, isTerminal(os.Stdin), os.Stdout, os.Stderr))
}

// isTerminal reports whether f is a character device.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type options struct {
	approve, decline, log bool
	timeout               time.Duration
}

// run is the program; it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, interactive bool, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sitebuilder", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.BoolVar(&o.approve, "approve", false, "approve the write without asking")
	fs.BoolVar(&o.decline, "decline", false, "decline the write without asking")
	fs.BoolVar(&o.log, "log", false, "print the loop's structured events (log/slog) to stderr")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "bound on the whole run")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.approve && o.decline {
		sayln(stderr, "sitebuilder: -approve and -decline exclude each other")
		return 2
	}
	baseURL, key := getenv("ANTHROPIC_BASE_URL"), getenv("ANTHROPIC_API_KEY")
	if baseURL == "" && key == "" {
		say(stdout, "%s", help)
		return 0
	}
	if baseURL == "" {
		baseURL = "https://api.anthropic.com"
	}
	if key == "" {
		key = "unused" // a local compatible server ignores it; the SDK wants one
	}
	name := getenv("ANTHROPIC_MODEL")
	if name == "" {
		name = defaultModel
	}
	client := sdk.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(key))
	model := anthropic.New(client, name, &anthropic.Options{MaxTokens: 2048})

	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	say(stdout, "model %s at %s\nuser: %s\n\n", name, baseURL, task)
	if err := story(ctx, model, o, stdin, interactive, stdout, stderr); err != nil {
		sayln(stderr, "sitebuilder:", err)
		var e *anthropic.Error
		if errors.As(err, &e) {
			say(stderr, "sitebuilder: the model failed (%s, retryable: %t); the run's snapshot could be resumed later\n",
				e.Kind, e.Kind.Retryable())
		}
		return 1
	}
	return 0
}

type (
	listInput struct{}
	website   struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	space struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	createSiteInput struct {
		Name    string `json:"name" jsonschema:"the site's name, as the user gave it"`
		SpaceID string `json:"space_id" jsonschema:"the id of the space, from a list_spaces result"`
	}
	site struct {
		SiteID  string `json:"site_id"`
		URL     string `json:"url"`
		SpaceID string `json:"space_id"`
	}
)

// catalog is the story's tools: two reads and a write whose space_id must
// come from a list_spaces result and whose name from the user's words.
func catalog(created *int) *tool.Catalog {
	listWebsites := tool.New("list_websites", "List the user's existing websites.",
		func(context.Context, listInput) ([]website, error) {
			return []website{{ID: "w-1", Name: "Company Blog"}}, nil
		})
	listWebsites.Effect = tool.Read
	listSpaces := tool.New("list_spaces", "List the spaces a website can be created in.",
		func(context.Context, listInput) ([]space, error) {
			return []space{{ID: "sp-7", Name: "Sales"}, {ID: "sp-42", Name: "Marketing"}}, nil
		})
	listSpaces.Effect = tool.Read
	createSite := tool.New("create_site", "Create a website in a space.",
		func(_ context.Context, in createSiteInput) (site, error) {
			*created++
			return site{SiteID: fmt.Sprintf("site-%d", 1000+*created), URL: "https://spring-sale.example.com", SpaceID: in.SpaceID}, nil
		})
	createSite.Effect = tool.Write
	createSite.Params = map[string]tool.Source{
		"name":     tool.User(),
		"space_id": tool.Result("list_spaces", "id"),
	}
	return tool.MustCatalog(listWebsites, listSpaces, createSite)
}

var node = react.Node{
	Name:         "create_site",
	Instructions: "Create the website the user asks for, in the space the user names. Record the new site's id as the output site_id, then finish.",
	Tools:        []string{"list_websites", "list_spaces", "create_site"},
	Outputs: []react.Output{
		{Key: "site_id", Description: "the id of the created site", Required: true},
		{Key: "site_url", Description: "the address of the created site"},
	},
	MaxRounds: 16,
}

// maxSuspensions bounds how often the story resumes.
const maxSuspensions = 4

func story(ctx context.Context, model react.Model, o options, stdin io.Reader, interactive bool, stdout, stderr io.Writer) error {
	created := 0
	tools := catalog(&created)
	stores := &guard.Options{} // shared by every loop value, as a service shares its stores
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.log {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	newLoop := func() (*react.Loop, error) {
		return react.New(react.Config{Model: model, Tools: tools, Guards: stores, Logger: logger})
	}
	in := bufio.NewScanner(stdin)
	loop, err := newLoop()
	if err != nil {
		return err
	}
	res, err := loop.Run(ctx, node, task)
	printed := printTranscript(stdout, res.Transcript, 1) // 0 is the task, printed above
	for i := 0; err == nil && res.Status == react.Suspended && i < maxSuspensions; i++ {
		decision, derr := decide(o, in, interactive, stdout, res.Suspension)
		if derr != nil {
			return derr
		}
		say(stdout, "-- resuming from the snapshot in a new loop value: %s\n\n", decision)
		if loop, err = newLoop(); err != nil {
			return err
		}
		res, err = loop.Resume(ctx, res.Snapshot, decision)
		printed = printTranscript(stdout, res.Transcript, printed)
	}
	if err != nil {
		return err
	}
	sayln(stdout)
	switch res.Status {
	case react.Finished:
		say(stdout, "-- finished after %d rounds: %s\n", res.Rounds, res.Summary)
		for _, out := range node.Outputs {
			if v, ok := res.Outputs[out.Key]; ok {
				say(stdout, "   output %s = %s (from %s %s)\n", out.Key, v.Value, v.Source, v.Ref)
			}
		}
	case react.Failed:
		say(stdout, "-- failed after %d rounds (%s): %s\n", res.Rounds, res.Failure.Kind, res.Failure.Reason)
	default:
		say(stdout, "-- stopped: %s after %d rounds\n", res.Status, res.Rounds)
	}
	say(stdout, "   create_site executed %d time(s)\n", created)
	return nil
}

// decide turns a suspension into the user's decision: the flags, else
// the terminal, else approve / a fixed answer.
func decide(o options, in *bufio.Scanner, interactive bool, stdout io.Writer, s *react.Suspension) (react.Decision, error) {
	if s.Kind == react.SuspendFollowUp {
		say(stdout, "-- suspended: the model asks: %s\n", s.Question)
		if interactive {
			say(stdout, "answer: ")
			if in.Scan() {
				return react.Answer(in.Text()), nil
			}
		}
		return react.Answer("Please do what I asked."), nil
	}
	p := s.Approval
	say(stdout, "-- suspended: %s(%s) waits for approval\n", p.Tool, p.Args)
	switch {
	case o.approve:
		return react.Approve(), nil
	case o.decline:
		return react.Decline("not now"), nil
	case !interactive:
		sayln(stdout, "-- stdin is not a terminal: approving (use -decline to refuse)")
		return react.Approve(), nil
	}
	for {
		say(stdout, "Approve %s(%s)? [y/n] ", p.Tool, p.Args)
		if !in.Scan() {
			if err := in.Err(); err != nil {
				return react.Decision{}, err
			}
			return react.Approve(), nil
		}
		switch strings.ToLower(strings.TrimSpace(in.Text())) {
		case "y", "yes":
			return react.Approve(), nil
		case "n", "no":
			return react.Decline("not now"), nil
		}
	}
}

// printTranscript prints the messages from index from on and returns the
// new count.
func printTranscript(w io.Writer, transcript []react.Message, from int) int {
	for _, m := range transcript[min(from, len(transcript)):] {
		switch m.Role {
		case react.RoleAssistant:
			line := "model"
			if m.Content != "" {
				line += ": " + oneLine(m.Content)
			}
			for _, c := range m.ToolCalls {
				line += fmt.Sprintf("\n  → %s(%s)", c.Name, oneLine(string(c.Args)))
			}
			sayln(w, line)
		case react.RoleTool:
			say(w, "  %s: %s\n", m.ToolName, oneLine(m.Content))
		case react.RoleUser: // after the task: the loop's note on a turn without tool calls
			say(w, "  (loop): %s\n", oneLine(m.Content))
		default: // the transcript holds no system message
		}
	}
	return len(transcript)
}

// say and sayln print to the program's output; a failed write to it has
// nowhere to be reported.
func say(w io.Writer, format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }

func sayln(w io.Writer, args ...any) { _, _ = fmt.Fprintln(w, args...) }

// oneLine shortens a text to one readable line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 140 {
		s = string(r[:140]) + "…"
	}
	return s
}
