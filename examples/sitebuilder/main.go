// Command sitebuilder is reactguard's demo: the story of the specification.
// A user asks an agent to create a website. The agent lists the existing
// websites and the spaces, calls the write tool create_site directly, is
// told that the write needs the user's approval (DEFERRED
// APPROVAL_REQUIRED, which neither stalls nor fails the node), asks for the
// approval with builtin_node_approval, and the run suspends. The host
// stores the run's JSON snapshot, asks the user, and resumes the snapshot
// in a new loop value, as a new process would. On approval create_site
// runs once, the agent records the new site as the node's output and
// finishes; on decline the agent ends the node with the user's refusal.
//
// The model is scripted (package reacttest), so the demo runs offline, with
// no keys and no network:
//
//	go run ./examples/sitebuilder            # asks y/n on a terminal, else approves
//	go run ./examples/sitebuilder -decline   # the user declines
//	go run ./examples/sitebuilder -lang zh   # every text the model sees in Chinese
//	go run ./examples/sitebuilder -log       # also print the structured events (slog)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, isTerminal(os.Stdin), os.Stdout, os.Stderr))
}

// isTerminal reports whether f is a character device (an interactive
// terminal), using only the standard library.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// The task the user gives the agent, per language.
var tasks = map[prompt.Lang]string{
	prompt.English: `Create a website called "Spring Sale" in the Marketing space.`,
	prompt.Chinese: `在 Marketing 空间里创建一个名为 "Spring Sale" 的网站。`,
}

// Website, Space and Site are what the fake backend returns.
type (
	Website struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	Space struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	Site struct {
		SiteID  string `json:"site_id"`
		URL     string `json:"url"`
		SpaceID string `json:"space_id"`
	}
)

// ListInput is the (empty) input of the list tools.
type ListInput struct{}

// CreateSiteInput is the input of create_site.
type CreateSiteInput struct {
	Name    string `json:"name" jsonschema:"the site's name, as the user gave it"`
	SpaceID string `json:"space_id" jsonschema:"the id of the space, from a list_spaces result"`
}

// backend is the fake system behind the tools; it counts the sites it
// creates so the demo can show that an approved write ran exactly once.
type backend struct {
	created []Site
}

// tools returns the catalog of the demo: two reads and one write whose
// space_id must come from a list_spaces result.
func (b *backend) tools() *tool.Catalog {
	listWebsites := tool.New("list_websites", "List the user's existing websites.",
		func(context.Context, ListInput) ([]Website, error) {
			return []Website{{ID: "w-1", Name: "Company Blog"}}, nil
		})
	listWebsites.Effect = tool.Read
	listSpaces := tool.New("list_spaces", "List the spaces a website can be created in.",
		func(context.Context, ListInput) ([]Space, error) {
			return []Space{{ID: "sp-7", Name: "Sales"}, {ID: "sp-42", Name: "Marketing"}}, nil
		})
	listSpaces.Effect = tool.Read
	createSite := tool.New("create_site", "Create a website in a space.",
		func(_ context.Context, in CreateSiteInput) (Site, error) {
			s := Site{SiteID: fmt.Sprintf("site-%d", 1001+len(b.created)), URL: "https://spring-sale.example.com", SpaceID: in.SpaceID}
			b.created = append(b.created, s)
			return s, nil
		})
	createSite.Effect = tool.Write
	createSite.Params = map[string]tool.Source{
		"name":     tool.User(),
		"space_id": tool.Result("list_spaces", "id"),
	}
	return tool.MustCatalog(listWebsites, listSpaces, createSite)
}

// node is the ReAct task of the demo.
var node = react.Node{
	Name:         "create_site",
	Instructions: "Create the website the user asks for, in the space the user names.",
	Tools:        []string{"list_websites", "list_spaces", "create_site"},
	Outputs: []react.Output{
		{Key: "site_id", Description: "the id of the created site", Required: true},
		{Key: "site_url", Description: "the address of the created site"},
	},
}

// agent is the scripted model. It is stateless, like a real LLM: every turn
// is computed from the conversation it is sent, so the run can be resumed
// in another process with a fresh model value.
func agent(req react.Request) react.Response {
	answered := func(id string) (react.Message, bool) { return reacttest.ToolMessage(req, id) }
	create := reacttest.Call("c3", "create_site", `{"name":"Spring Sale","space_id":"sp-42"}`)
	if _, listed := answered("c1"); !listed {
		return reacttest.Turn("Let me look at the existing websites and the spaces.",
			reacttest.Call("c1", "list_websites", `{}`), reacttest.Call("c2", "list_spaces", `{}`))
	}
	if _, ok := answered("c3"); !ok {
		return reacttest.Turn("Marketing is sp-42. Creating the site.", create)
	}
	approval, ok := answered("c4")
	if !ok {
		return reacttest.Calls(reacttest.Approval("c4", "create_site", `create "Spring Sale" in Marketing (sp-42)`))
	}
	if !granted(approval.Content) {
		return reacttest.Calls(reacttest.FailNode("c9", "the user declined creating the site"))
	}
	created, ok := answered("c5")
	if !ok {
		create.ID = "c5"
		return reacttest.Turn("Approved. Creating the site now.", create)
	}
	if _, ok := answered("c6"); !ok {
		var site Site
		start := strings.IndexByte(created.Content, '{')
		if created.IsError || start < 0 || json.Unmarshal([]byte(created.Content[start:]), &site) != nil {
			return reacttest.Calls(reacttest.FollowUp("c9", "Creating the site failed: "+created.Content+" How should I proceed?"))
		}
		return reacttest.Calls(
			reacttest.OutputSet("c6", "site_id", site.SiteID, react.SourceToolResult, "c5"),
			reacttest.OutputSet("c7", "site_url", site.URL, react.SourceToolResult, "c5"),
		)
	}
	return reacttest.Calls(reacttest.Finish("c8", "Created Spring Sale in Marketing."))
}

// granted reports whether the tool message of builtin_node_approval says
// the user approved (in either catalog's words).
func granted(msg string) bool {
	for _, lang := range []prompt.Lang{prompt.English, prompt.Chinese} {
		if msg == prompt.For(lang).Text(prompt.ResultApprovalGranted, "tool", "create_site") {
			return true
		}
	}
	return false
}

// options are the command-line flags.
type options struct {
	approve, decline, log bool
	lang                  prompt.Lang
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("sitebuilder", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var lang string
	fs.BoolVar(&o.approve, "approve", false, "approve the write without asking")
	fs.BoolVar(&o.decline, "decline", false, "decline the write without asking")
	fs.BoolVar(&o.log, "log", false, "also print the loop's structured events (log/slog) to stderr")
	fs.StringVar(&lang, "lang", "en", "language of the texts the model sees: en or zh")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.approve && o.decline {
		return o, errors.New("-approve and -decline exclude each other")
	}
	switch lang {
	case "en":
		o.lang = prompt.English
	case "zh":
		o.lang = prompt.Chinese
	default:
		return o, fmt.Errorf("-lang %q: want en or zh", lang)
	}
	return o, nil
}

// run is the program; it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, interactive bool, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		sayln(stderr, "sitebuilder:", err)
		return 2
	}
	if err := demo(ctx, o, stdin, interactive, stdout, stderr); err != nil {
		sayln(stderr, "sitebuilder:", err)
		return 1
	}
	return 0
}

func demo(ctx context.Context, o options, stdin io.Reader, interactive bool, stdout, stderr io.Writer) error {
	b := &backend{}
	catalog := b.tools()
	// The stores that must outlive a process (approvals, write ledger,
	// evidence). A service on many replicas plugs in its own; the demo
	// shares in-memory ones between its two loop values.
	stores := &guard.Options{}
	tr := newTrace(stdout)
	newLoop := func() (*react.Loop, error) {
		obs := react.Observer(tr)
		if o.log {
			obs = react.Observers(tr, react.NewLogObserver(slog.New(slog.NewTextHandler(stderr, nil))))
		}
		return react.New(react.Config{
			Model:    reacttest.Func(agent),
			Tools:    catalog,
			Lang:     o.lang,
			Guards:   stores,
			Observer: obs,
			NewRunID: func() string { return "run-1" },
		})
	}

	task := tasks[o.lang]
	say(stdout, "user: %s\n\n", task)
	loop, err := newLoop()
	if err != nil {
		return err
	}
	res, err := loop.Run(ctx, node, task)
	if err != nil {
		return err
	}
	tr.print(res.Transcript)
	if res.Status != react.Suspended || res.Suspension.Kind != react.SuspendApproval {
		return fmt.Errorf("expected an approval suspension, got %s", res.Status)
	}
	pending := res.Suspension.Approval
	say(stdout, "\n-- suspended: %s(%s) waits for the user's approval; the host stores the JSON snapshot\n",
		pending.Tool, pending.Args)

	approved, err := decide(o, stdin, interactive, stdout, pending)
	if err != nil {
		return err
	}
	decision := react.Approve()
	if !approved {
		decision = react.Decline("not now")
	}
	say(stdout, "-- resuming from the snapshot in a new loop value: %s\n\n", decision)

	// A new loop value, as a new process would build: it gets the snapshot
	// bytes and the shared stores, nothing else.
	loop, err = newLoop()
	if err != nil {
		return err
	}
	snapshot := res.Snapshot
	res, err = loop.Resume(ctx, snapshot, decision)
	if err != nil {
		return err
	}
	tr.print(res.Transcript)

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
		return fmt.Errorf("unexpected end of the run: %s", res.Status)
	}
	say(stdout, "   create_site executed %d time(s)\n", len(b.created))
	return nil
}

// decide returns the user's decision: the flag, else y/n from an
// interactive stdin, else approve.
func decide(o options, stdin io.Reader, interactive bool, stdout io.Writer, p *react.PendingWrite) (bool, error) {
	switch {
	case o.approve:
		return true, nil
	case o.decline:
		return false, nil
	case !interactive:
		sayln(stdout, "-- stdin is not a terminal: approving (use -decline to refuse)")
		return true, nil
	}
	in := bufio.NewScanner(stdin)
	for {
		say(stdout, "Approve %s(%s)? [y/n] ", p.Tool, p.Args)
		if !in.Scan() {
			if err := in.Err(); err != nil {
				return false, err
			}
			// /dev/null is a character device too: treat a closed stdin
			// like one that is not a terminal.
			sayln(stdout, "\n-- no answer on stdin: approving (use -decline to refuse)")
			return true, nil
		}
		switch strings.ToLower(strings.TrimSpace(in.Text())) {
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		}
	}
}

// trace prints the run as it happened: one line per tool call with its
// round, tool, outcome, code and the message the model read.
type trace struct {
	react.NopObserver
	w       io.Writer
	events  map[string]react.ToolEvent
	printed int
}

func newTrace(w io.Writer) *trace { return &trace{w: w, events: map[string]react.ToolEvent{}} }

func (t *trace) OnToolInvoked(_ context.Context, e react.ToolEvent) { t.events[e.CallID] = e }
func (t *trace) OnToolSkipped(_ context.Context, e react.ToolEvent) { t.events[e.CallID] = e }

// print prints the messages of transcript not printed yet.
func (t *trace) print(transcript []react.Message) {
	round := 0
	for i, m := range transcript {
		if m.Role == react.RoleAssistant {
			round++
		}
		if i < t.printed {
			continue
		}
		switch m.Role {
		case react.RoleAssistant:
			names := make([]string, len(m.ToolCalls))
			for k, c := range m.ToolCalls {
				names[k] = c.Name
			}
			line := fmt.Sprintf("round %d  model", round)
			if m.Content != "" {
				line += ": " + m.Content
			}
			if len(names) > 0 {
				line += " → " + strings.Join(names, ", ")
			}
			sayln(t.w, line)
		case react.RoleTool:
			e := t.events[m.ToolCallID]
			verdict := "SKIPPED"
			if e.Outcome.IsValid() {
				verdict = e.Outcome.String()
			}
			if e.Code != 0 {
				verdict += " " + e.Code.String()
			}
			say(t.w, "round %d  %-22s %-28s %s\n", round, m.ToolName, verdict, oneLine(m.Content))
		default: // the user's words are printed before the run; system text is not shown
		}
	}
	t.printed = len(transcript)
}

// say and sayln print to w. A demo has nothing better to do when its
// output fails, so the errors are dropped on purpose.
func say(w io.Writer, format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }

func sayln(w io.Writer, args ...any) { _, _ = fmt.Fprintln(w, args...) }

// oneLine shortens a tool message to one readable line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 110 {
		s = string(r[:110]) + "…"
	}
	return s
}
