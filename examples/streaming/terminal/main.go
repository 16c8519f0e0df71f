// Command terminal streams a run to a terminal: the agent's text appears
// as the model writes it, each tool call as it starts and its verdict as
// it is known, and the approval is asked as soon as the run suspends; the
// decision resumes the run, streamed too. The agent is the sitebuilder
// story's scripted model (package story) made to stream in small chunks
// (reacttest.Streaming), so the demo runs offline:
//
//	go run ./examples/streaming/terminal             # asks y/n
//	go run ./examples/streaming/terminal -delay 0    # no pause between chunks
//
// With a real model, pass an adapter's model (adapters/openai,
// adapters/anthropic): they stream.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/reactguard/reactguard/examples/sitebuilder/story"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the program; it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("terminal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	delay := fs.Duration("delay", 15*time.Millisecond, "pause between two chunks of the model's answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	backend := &story.Backend{}
	loop, err := react.New(react.Config{
		Model:    slow{reacttest.Streaming(story.Scripted(), 6), *delay},
		Tools:    backend.Tools(),
		Observer: react.DiscardObserver,
	})
	if err != nil {
		_, _ = fmt.Fprintln(stderr, err)
		return 1
	}
	in := bufio.NewReader(stdin)
	t := &terminal{out: stdout, in: in}
	_, _ = fmt.Fprintf(stdout, "user: %s\n", story.Task(prompt.English))
	res, err := t.show(loop.RunStream(ctx, story.Node(), story.Task(prompt.English)))
	for err == nil && res.Status == react.Suspended {
		res, err = t.show(loop.ResumeStream(ctx, res.Snapshot, t.decision))
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	_, _ = fmt.Fprintf(stdout, "\n%s after %d rounds; sites created: %d\n", res.Status, res.Rounds, backend.Executions())
	return 0
}

// terminal prints a run's events as they come.
type terminal struct {
	out      io.Writer
	in       *bufio.Reader
	speaking bool           // the model's text is being printed
	started  string         // the call id of the last call started
	decision react.Decision // the answer to the last suspension
}

// show prints the events of one call of RunStream or ResumeStream and
// returns its result; at a suspension it asks the user and keeps the
// decision for the resume.
func (t *terminal) show(events iter.Seq2[react.Event, error]) (react.Result, error) {
	for e, err := range events {
		switch e.Kind {
		case react.EventTextDelta:
			if !t.speaking {
				_, _ = fmt.Fprint(t.out, "\nagent: ")
				t.speaking = true
			}
			_, _ = fmt.Fprint(t.out, e.Text)
		case react.EventToolStart:
			t.speaking = false
			_, _ = fmt.Fprintf(t.out, "\n  → %s %s", e.ToolStart.Tool, e.ToolStart.Args)
			t.started = e.ToolStart.CallID
		case react.EventToolInvoked:
			v := e.Tool
			if v.CallID != t.started { // answered by the person's decision
				_, _ = fmt.Fprintf(t.out, "  %s", v.Tool)
			}
			_, _ = fmt.Fprintf(t.out, "  ⇒ %s", v.Outcome)
			if v.Code != 0 {
				_, _ = fmt.Fprintf(t.out, " %s", v.Code)
			}
		case react.EventSuspended:
			t.ask(e.Suspend.Suspension)
		case react.EventRunEnd:
			t.speaking = false
			return *e.RunEnd.Result, err
		default:
		}
	}
	return react.Result{}, fmt.Errorf("the stream ended without its run end")
}

// ask asks the person what the suspension needs.
func (t *terminal) ask(s react.Suspension) {
	t.speaking = false
	if a := s.Approval; a != nil {
		_, _ = fmt.Fprintf(t.out, "\n\napprove %s %s? [y/n] ", a.Tool, a.Args)
		line, _ := t.in.ReadString('\n')
		_, _ = fmt.Fprintln(t.out)
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "n") {
			t.decision = react.Decline(s.Ticket, "not now")
			return
		}
		t.decision = react.Approve(s.Ticket)
		return
	}
	_, _ = fmt.Fprintf(t.out, "\n\n%s\n> ", s.Question)
	line, _ := t.in.ReadString('\n')
	t.decision = react.Answer(s.Ticket, strings.TrimSpace(line))
}

// slow pauses between the chunks of a streaming model, as a real model
// does between its tokens.
type slow struct {
	react.StreamModel
	delay time.Duration
}

func (s slow) GenerateStream(ctx context.Context, req react.Request) iter.Seq2[react.Chunk, error] {
	return func(yield func(react.Chunk, error) bool) {
		for c, err := range s.StreamModel.GenerateStream(ctx, req) {
			if s.delay > 0 {
				time.Sleep(s.delay)
			}
			if !yield(c, err) {
				return
			}
		}
	}
}
