package story

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/reactguard/reactguard/react"
)

// View selects how [Run] prints the trace. The zero value is [Verdicts].
type View uint8

// The views.
const (
	// Verdicts prints one line per model turn and per tool message, each
	// with its round; a tool line carries the verdict (outcome and code)
	// and the message the model read. Suits a scripted model, whose turns
	// are known: the verdicts are the point.
	Verdicts View = 0
	// Conversation prints the conversation: each model turn with the
	// arguments of its calls, each tool message, and the loop's note on a
	// turn without tool calls. Suits a real model, whose arguments and
	// detours are the point.
	Conversation View = 1

	maxView = Conversation
)

// String returns verdicts or conversation.
func (v View) String() string {
	switch v {
	case Verdicts:
		return "verdicts"
	case Conversation:
		return "conversation"
	}
	return "view(" + strconv.Itoa(int(v)) + ")"
}

// IsValid reports whether v is one of the views.
func (v View) IsValid() bool { return v <= maxView }

// printer prints a story's trace. It observes the loops of the story (one
// printer for all of them) and prints the transcript as it grows.
type printer interface {
	react.Observer
	// print prints the messages of transcript not printed yet.
	print(transcript []react.Message)
	// suspended prints what the run waits for.
	suspended(s *react.Suspension)
	// skip marks the first n messages of the transcript as printed (an
	// earlier process printed them).
	skip(n int)
}

func newPrinter(v View, w io.Writer) printer {
	if v == Conversation {
		return &conversation{w: w, printed: 1} // 0 is the task, printed by Run
	}
	return &verdicts{w: w, events: map[string]react.ToolEvent{}}
}

// verdicts is the [Verdicts] view. It records the tool events to print
// each tool message with its verdict.
type verdicts struct {
	w       io.Writer
	events  map[string]react.ToolEvent
	printed int
}

// Observe records the verdicts (and skips) of calls for the tool
// messages.
func (t *verdicts) Observe(ctx context.Context, e react.Event) context.Context {
	if e.Kind == react.EventToolInvoked || e.Kind == react.EventToolSkipped {
		t.events[e.Tool.CallID] = *e.Tool
	}
	return ctx
}

// Wants receives only the calls' verdicts and skips.
func (t *verdicts) Wants() react.EventSet {
	return react.Events(react.EventToolInvoked, react.EventToolSkipped)
}

func (t *verdicts) print(transcript []react.Message) {
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
			say(t.w, "round %d  %-22s %-28s %s\n", round, m.ToolName, verdict, oneLine(m.Content, 110))
		default: // the user's words are printed before the run; system text is not shown
		}
	}
	t.printed = len(transcript)
}

func (t *verdicts) skip(n int) { t.printed = n }

func (t *verdicts) suspended(s *react.Suspension) {
	if s.Kind == react.SuspendFollowUp {
		say(t.w, "\n-- suspended: the model asks: %s\n", s.Question)
		return
	}
	say(t.w, "\n-- suspended: %s(%s) waits for the user's approval; the host stores the JSON snapshot\n",
		s.Approval.Tool, s.Approval.Args)
}

// conversation is the [Conversation] view.
type conversation struct {
	w       io.Writer
	printed int
}

func (t *conversation) skip(n int) { t.printed = n }

// Observe receives nothing: the conversation is printed from the
// transcript.
func (t *conversation) Observe(ctx context.Context, _ react.Event) context.Context { return ctx }

// Wants receives no event.
func (t *conversation) Wants() react.EventSet { return 0 }

func (t *conversation) print(transcript []react.Message) {
	for _, m := range transcript[min(t.printed, len(transcript)):] {
		switch m.Role {
		case react.RoleAssistant:
			line := "model"
			if m.Content != "" {
				line += ": " + oneLine(m.Content, 140)
			}
			for _, c := range m.ToolCalls {
				line += fmt.Sprintf("\n  → %s(%s)", c.Name, oneLine(string(c.Args), 140))
			}
			sayln(t.w, line)
		case react.RoleTool:
			say(t.w, "  %s: %s\n", m.ToolName, oneLine(m.Content, 140))
		case react.RoleUser: // after the task: the loop's note on a turn without tool calls
			say(t.w, "  (loop): %s\n", oneLine(m.Content, 140))
		default: // the transcript holds no system message
		}
	}
	t.printed = max(t.printed, len(transcript))
}

func (t *conversation) suspended(s *react.Suspension) {
	if s.Kind == react.SuspendFollowUp {
		say(t.w, "-- suspended: the model asks: %s\n", s.Question)
		return
	}
	say(t.w, "-- suspended: %s(%s) waits for approval\n", s.Approval.Tool, s.Approval.Args)
}

// say and sayln print to w. A story has nothing better to do when its
// output fails, so the errors are dropped on purpose.
func say(w io.Writer, format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }

func sayln(w io.Writer, args ...any) { _, _ = fmt.Fprintln(w, args...) }

// oneLine shortens s to one line of at most n runes (and an ellipsis).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}
