package react

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultHistoryTurns is the number of a thread's earlier turns sent to
// the model with a message when [HistoryPolicy].MaxTurns is 0.
const DefaultHistoryTurns = 20

// HistoryPolicy bounds what of a thread's earlier turns ([InThread]) is
// sent to the model with each new message: the most recent turns that fit
// both bounds, whole (a turn is never cut, so every tool call in the
// prompt keeps its result), preceded by the host's summary of the turns
// before them when Summarize is set. It bounds the prompt only: what the
// guards check is the thread's evidence, which keeps every earlier turn
// (see package threadstore), so a value the user gave in a turn that was
// cut or summarized away is still a user-given source for the parameter
// contract. The zero value sends the last [DefaultHistoryTurns] turns, with
// no token bound and no summary.
type HistoryPolicy struct {
	// MaxTurns bounds the number of earlier turns sent; 0 means
	// [DefaultHistoryTurns], a negative value sends none (the summary
	// alone, when there is one).
	MaxTurns int
	// MaxTokens bounds the tokens of the earlier turns sent; 0 means no
	// token bound. The summary, or the one-line note that earlier turns
	// are left out, comes on top (the Summarizer bounds the summary's
	// length). A turn's tokens are counted when it
	// ends: by Tokens when set; else from the token usage the provider
	// reported for the run's model calls (the growth of the prompt over
	// the run, plus its last answer), which the adapters of this
	// repository pass on ([Response].Usage); else estimated from the
	// turn's text (about four bytes a token).
	MaxTokens int
	// Tokens, when set, counts the tokens of one message (the host's
	// tokenizer for its model). It must be safe for concurrent use.
	Tokens func(m Message) int
	// Summarize, when set, is asked for a summary of the turns that leave
	// the prompt: it receives the thread's previous summary ("" for the
	// first) and the turns that now fall out of the window, oldest first,
	// at most [SummaryBatch] at a time, and returns the summary of
	// everything up to the last of them. The summary is kept on the thread,
	// sealed, and sent before the turns that still fit, as a message the
	// model is told is the host's summary, not the user's words. Each turn
	// is summarized once; an error stops the message before it runs (Run
	// returns it and the thread is free). It must be safe for concurrent
	// use.
	Summarize Summarizer
}

// SummaryBatch bounds the turns one call of a [Summarizer] receives.
const SummaryBatch = 32

// Summarizer summarizes a thread's turns that leave the prompt; see
// [HistoryPolicy].Summarize.
type Summarizer func(ctx context.Context, previous string, turns []Turn) (string, error)

// Turn is one committed turn of a thread: a user message and everything
// the run that answered it did, as [Loop.Turns] reads it from its sealed
// form.
type Turn struct {
	// Index is the turn's position in the thread, from 1.
	Index int
	// Run is the id of the run that answered the message.
	Run string
	// Status is how that run ended: Finished or Failed.
	Status Status
	// User is the user's message.
	User string
	// Answer is the run's answer to the user: the summary it passed to
	// builtin_node_finish, or the text that ended it ([Node].TextAnswers);
	// "" when it failed or gave none.
	Answer string
	// Messages are the turn's messages as later messages' prompts hold
	// them: the user's message first, then the model's turns and the tool
	// results. The call ids are marked with the turn ("turn3_c1" for call
	// c1 of turn 3), as in the thread's evidence, so a later run may name
	// an earlier result as the source of an output.
	Messages []Message
	// Tokens is what the turn costs in a prompt (see
	// [HistoryPolicy].MaxTokens).
	Tokens int
	// At is when the turn was committed.
	At time.Time
}

// earlierCallID marks the call id of turn: earlier turns' calls, in a
// thread's evidence and in later prompts, are told apart from a run's own
// and from each other's.
func earlierCallID(turn int, id string) string {
	return "turn" + strconv.Itoa(turn) + "_" + id
}

// markCalls returns msgs with every call id marked with turn.
func markCalls(turn int, msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for k, c := range m.ToolCalls {
				c.ID = earlierCallID(turn, c.ID)
				calls[k] = c
			}
			m.ToolCalls = calls
		}
		if m.ToolCallID != "" {
			m.ToolCallID = earlierCallID(turn, m.ToolCallID)
		}
		out[i] = m
	}
	return out
}

// estimateTokens estimates the tokens of m: about four bytes a token, and
// a few for the message's framing.
func estimateTokens(m Message) int {
	n := len(m.Content) + len(m.ToolCallID) + len(m.ToolName)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Args)
	}
	return (n+3)/4 + 4
}

// tokensOf counts the tokens of msgs by the policy's Tokens, else by
// estimate.
func (p *HistoryPolicy) tokensOf(msgs ...Message) int {
	n := 0
	for _, m := range msgs {
		if p.Tokens != nil {
			n += max(p.Tokens(m), 0)
		} else {
			n += estimateTokens(m)
		}
	}
	return n
}

func (p *HistoryPolicy) maxTurns() int {
	switch {
	case p.MaxTurns == 0:
		return DefaultHistoryTurns
	case p.MaxTurns < 0:
		return 0
	}
	return p.MaxTurns
}

// The sealed forms of a thread's turns and summary. Like a snapshot's
// state (see [SnapshotFormat]), each is sealed with HMAC-SHA256 under the
// loop's snapshot keys over its canonical form, with its own format name,
// so that a thread's history read back from a database is exactly what
// the loop wrote: a turn moved to another thread, another position or
// another owner, or edited, is refused ([ErrThreadCorrupt]).
const (
	turnFormat    = "reactguard.react.turn"
	summaryFormat = "reactguard.react.summary"
	turnVersion   = 1
)

// ErrThreadCorrupt is wrapped by the error of a message to, a resume in,
// or a read of a thread whose stored turn or summary does not open: it is
// not sealed under a key of the loop (a thread written by a process
// without Config.SnapshotKeys is read by another), its seal does not match
// its content (it was edited), or it belongs to another thread, position
// or owner. Nothing runs.
var ErrThreadCorrupt = errors.New("react: a thread's stored history does not open")

// wireTurn is the sealed state of a turn.
type wireTurn struct {
	Thread    string        `json:"thread"`
	Index     int           `json:"index"`
	Run       string        `json:"run"`
	Owner     Owner         `json:"owner,omitzero"`
	Status    Status        `json:"status"`
	Answer    string        `json:"answer,omitempty"`
	Messages  []wireMessage `json:"messages"`
	UserTexts []string      `json:"user_texts,omitempty"`
}

// wireSummary is the sealed state of a thread's summary.
type wireSummary struct {
	Thread  string `json:"thread"`
	Through int    `json:"through"`
	Owner   Owner  `json:"owner,omitzero"`
	Text    string `json:"text"`
}

// sealAs seals v (a wireTurn or wireSummary) as format under the loop's
// first key, in its canonical form (see seal).
func sealAs[T any](l *Loop, format string, v *T) ([]byte, error) {
	first, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var canon T
	if err := strictDecode(first, &canon); err != nil {
		return nil, err
	}
	state, err := json.Marshal(&canon)
	if err != nil {
		return nil, err
	}
	k := l.keys[0]
	return json.Marshal(envelope{Format: format, Version: turnVersion, Key: k.id, MAC: k.macOf(format, turnVersion, state), State: state})
}

// openAs opens a state sealed by sealAs as format into v.
func openAs[T any](l *Loop, format string, b []byte, v *T) error {
	var env envelope
	if err := strictDecode(b, &env); err != nil {
		return fmt.Errorf("not a sealed %s: %w", format, err)
	}
	if env.Format != format || env.Version != turnVersion {
		return fmt.Errorf("a %s version %d, not a %s version %d", env.Format, env.Version, format, turnVersion)
	}
	var key *sealKey
	for i := range l.keys {
		if l.keys[i].id == env.Key {
			key = &l.keys[i]
			break
		}
	}
	if key == nil {
		return fmt.Errorf("sealed under a key this loop does not hold (key id %q); give every process the same Config.SnapshotKeys", env.Key)
	}
	if err := strictDecode(env.State, v); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if !hmac.Equal([]byte(key.macOf(format, env.Version, canon)), []byte(env.MAC)) {
		return errors.New("the seal does not match the content")
	}
	return nil
}

// turnCache keeps the turns a Loop opened, by the SHA-256 of their sealed
// bytes, so that the turns every message of a thread sends again are
// opened (decoded, re-encoded, authenticated) once: a sealed turn never
// changes, and the checks of its thread, position and owner are made at
// every use. It holds at most turnCacheSize turns, the oldest dropped
// first. Safe for concurrent use.
type turnCache struct {
	mu   sync.Mutex
	m    map[[sha256.Size]byte]*wireTurn
	ring [][sha256.Size]byte
	next int
}

const turnCacheSize = 1024

func (c *turnCache) get(k [sha256.Size]byte) *wireTurn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *turnCache) put(k [sha256.Size]byte, w *wireTurn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m, c.ring = make(map[[sha256.Size]byte]*wireTurn, turnCacheSize), make([][sha256.Size]byte, turnCacheSize)
	}
	if _, ok := c.m[k]; ok {
		return
	}
	if old := c.ring[c.next]; len(c.m) == turnCacheSize {
		delete(c.m, old)
	}
	c.ring[c.next], c.m[k] = k, w
	c.next = (c.next + 1) % turnCacheSize
}

// openTurn opens the stored turn t of thread id, owned by owner. The
// returned turn is shared: read it, do not change it.
func (l *Loop) openTurn(id string, owner Owner, index int, content []byte) (*wireTurn, error) {
	k := sha256.Sum256(content)
	w := l.opened.get(k)
	if w == nil {
		w = new(wireTurn)
		if err := openAs(l, turnFormat, content, w); err != nil {
			return nil, fmt.Errorf("%w: thread %q, turn %d: %w", ErrThreadCorrupt, id, index, err)
		}
		l.opened.put(k, w)
	}
	switch {
	case w.Thread != id || w.Index != index:
		return nil, fmt.Errorf("%w: thread %q, turn %d: it is turn %d of thread %q", ErrThreadCorrupt, id, index, w.Index, w.Thread)
	case w.Owner != owner:
		return nil, fmt.Errorf("%w: thread %q, turn %d: it belongs to %s, the thread to %s", ErrThreadCorrupt, id, index, w.Owner, owner)
	case w.Status != Finished && w.Status != Failed:
		return nil, fmt.Errorf("%w: thread %q, turn %d: status %v", ErrThreadCorrupt, id, index, w.Status)
	case len(w.Messages) == 0 || w.Messages[0].Role != RoleUser:
		return nil, fmt.Errorf("%w: thread %q, turn %d: it does not start with the user's message", ErrThreadCorrupt, id, index)
	}
	for _, m := range w.Messages {
		switch m.Role {
		case RoleUser, RoleAssistant, RoleTool:
		default:
			return nil, fmt.Errorf("%w: thread %q, turn %d: a message of role %q", ErrThreadCorrupt, id, index, m.Role)
		}
	}
	return w, nil
}

// openSummary opens the stored summary of thread id, owned by owner, said
// to cover through turns.
func (l *Loop) openSummary(id string, owner Owner, through int, content []byte) (string, error) {
	var w wireSummary
	if err := openAs(l, summaryFormat, content, &w); err != nil {
		return "", fmt.Errorf("%w: thread %q, summary: %w", ErrThreadCorrupt, id, err)
	}
	if w.Thread != id || w.Through != through || w.Owner != owner {
		return "", fmt.Errorf("%w: thread %q, summary: it is %s's summary of thread %q through turn %d", ErrThreadCorrupt, id, w.Owner, w.Thread, w.Through)
	}
	return w.Text, nil
}

// publicTurn is the Turn of an opened wire turn.
func publicTurn(w *wireTurn, tokens int, at time.Time) Turn {
	t := Turn{Index: w.Index, Run: w.Run, Status: w.Status, Answer: w.Answer, Messages: fromWire(w.Messages)[1:], Tokens: tokens, At: at}
	t.User = t.Messages[0].Content
	return t
}

// answerOf is the text a run that ended gave the user.
func answerOf(status Status, summary string) string {
	if status != Finished {
		return ""
	}
	return strings.TrimSpace(summary)
}
