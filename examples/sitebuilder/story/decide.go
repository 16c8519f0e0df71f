package story

import (
	"bufio"
	"io"
	"strings"

	"github.com/reactguard/reactguard/react"
)

// DefaultAnswer is the answer to a follow-up question when no one can type
// one (stdin is not a terminal, or it is closed).
const DefaultAnswer = "Please do what I asked."

// DeclineReason is the reason a declined approval gives the model.
const DeclineReason = "not now"

// decide returns the user's decision on the suspension s: for an approval
// the Approve or Decline flag, else y/n from an interactive in, else
// approve; for a follow-up a line from an interactive in, else
// [DefaultAnswer]. It returns an error only when reading in fails.
func decide(cfg *Config, in *bufio.Scanner, out io.Writer, s *react.Suspension) (react.Decision, error) {
	if s.Kind == react.SuspendFollowUp {
		if cfg.Interactive {
			say(out, "answer: ")
			if in.Scan() {
				return react.Answer(s.Ticket, in.Text()), nil
			}
			if err := in.Err(); err != nil {
				return react.Decision{}, err
			}
		}
		return react.Answer(s.Ticket, DefaultAnswer), nil
	}
	switch {
	case cfg.Approve:
		return react.Approve(s.Ticket), nil
	case cfg.Decline:
		return react.Decline(s.Ticket, DeclineReason), nil
	case !cfg.Interactive:
		sayln(out, "-- stdin is not a terminal: approving (use -decline to refuse)")
		return react.Approve(s.Ticket), nil
	}
	p := s.Approval
	for {
		say(out, "Approve %s(%s)? [y/n] ", p.Tool, p.Args)
		if !in.Scan() {
			if err := in.Err(); err != nil {
				return react.Decision{}, err
			}
			// /dev/null is a character device too: treat a closed stdin
			// like one that is not a terminal.
			sayln(out, "\n-- no answer on stdin: approving (use -decline to refuse)")
			return react.Approve(s.Ticket), nil
		}
		switch strings.ToLower(strings.TrimSpace(in.Text())) {
		case "y", "yes":
			return react.Approve(s.Ticket), nil
		case "n", "no":
			return react.Decline(s.Ticket, DeclineReason), nil
		}
	}
}
