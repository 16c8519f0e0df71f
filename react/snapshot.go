package react

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reactguard/reactguard/evidence"
)

// The snapshot format. A snapshot is the JSON object
//
//	{"format":"reactguard.react.snapshot","version":1,"checksum":"sha256:…","state":{…}}
//
// where checksum is the SHA-256 of the state's encoding by this package, so
// that a store may re-indent the document or reorder its keys (a jsonb
// column, say) but any change of content is detected. The state's fields
// are not API; the envelope's are.
const (
	SnapshotFormat  = "reactguard.react.snapshot"
	SnapshotVersion = 1
)

// Errors of [Loop.Resume] for snapshots it refuses. Both wrap
// [ErrSnapshot].
var (
	// ErrSnapshot is wrapped by every snapshot refusal.
	ErrSnapshot = errors.New("react: snapshot refused")
	// ErrSnapshotForeign: the document is not a snapshot of this package,
	// or of a version it does not read.
	ErrSnapshotForeign = fmt.Errorf("%w: not a %s version %d", ErrSnapshot, SnapshotFormat, SnapshotVersion)
	// ErrSnapshotCorrupt: the document is a snapshot of this package, but
	// it does not parse, its checksum does not match its content, or its
	// state is inconsistent.
	ErrSnapshotCorrupt = fmt.Errorf("%w: corrupt", ErrSnapshot)
)

type envelope struct {
	Format   string          `json:"format"`
	Version  int             `json:"version"`
	Checksum string          `json:"checksum"`
	State    json.RawMessage `json:"state"`
}

type snapState struct {
	Run         string                 `json:"run"`
	Node        Node                   `json:"node"`
	Status      Status                 `json:"status"`
	Round       int                    `json:"round"`
	Stalls      int                    `json:"stalls"`
	Transcript  []wireMessage          `json:"transcript"`
	Wave        *wireWave              `json:"wave,omitempty"`
	Outputs     map[string]OutputValue `json:"outputs,omitempty"`
	Suspension  *Suspension            `json:"suspension,omitempty"`
	Answers     []qa                   `json:"answers,omitempty"`
	UserTexts   []string               `json:"user_texts,omitempty"`
	WriteFailed bool                   `json:"write_failed,omitempty"`
	Evidence    *evidence.Snapshot     `json:"evidence,omitempty"`
	Calls       []CallReport           `json:"calls,omitempty"`
}

type wireWave struct {
	Message int             `json:"message"`
	Next    int             `json:"next"`
	Invalid map[int]problem `json:"invalid,omitempty"`
}

// wireMessage is a Message whose call arguments are kept as text, so that
// arguments that are not JSON survive the round trip byte for byte.
type wireMessage struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []wireCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	IsError    bool       `json:"is_error,omitempty"`
}

type wireCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args"`
}

func toWire(msgs []Message) []wireMessage {
	out := make([]wireMessage, len(msgs))
	for i, m := range msgs {
		w := wireMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError}
		if len(m.ToolCalls) > 0 {
			w.ToolCalls = make([]wireCall, len(m.ToolCalls))
			for k, c := range m.ToolCalls {
				w.ToolCalls[k] = wireCall{ID: c.ID, Name: c.Name, Args: string(c.Args)}
			}
		}
		out[i] = w
	}
	return out
}

func fromWire(ws []wireMessage) []Message {
	out := make([]Message, 1, len(ws)+16) // msgs[0] is the system slot
	for _, w := range ws {
		m := Message{Role: w.Role, Content: w.Content, ToolCallID: w.ToolCallID, ToolName: w.ToolName, IsError: w.IsError}
		if len(w.ToolCalls) > 0 {
			m.ToolCalls = make([]ToolCall, len(w.ToolCalls))
			for k, c := range w.ToolCalls {
				var args json.RawMessage
				if c.Args != "" {
					args = json.RawMessage(c.Args)
				}
				m.ToolCalls[k] = ToolCall{ID: c.ID, Name: c.Name, Args: args}
			}
		}
		out = append(out, m)
	}
	return out
}

// snapshot encodes the run's state.
func (r *run) snapshot(ctx context.Context) ([]byte, error) {
	s := snapState{
		Run:         r.id,
		Node:        r.node,
		Status:      r.status,
		Round:       r.round,
		Stalls:      r.stalls,
		Transcript:  toWire(r.msgs[1:]),
		Suspension:  r.susp,
		Answers:     r.answers,
		UserTexts:   r.userTexts,
		WriteFailed: r.writeFailed,
		Calls:       r.calls,
	}
	if len(r.outputs) > 0 {
		s.Outputs = r.outputs
	}
	if w := r.wave; w != nil {
		s.Wave = &wireWave{Message: w.msg - 1, Next: w.next, Invalid: w.invalid}
	}
	if ex, ok := r.l.ledger.(evidence.Exporter); ok {
		ev, err := ex.Export(ctx, r.id)
		if err != nil {
			return nil, fmt.Errorf("react: snapshot: evidence: %w", err)
		}
		s.Evidence = &ev
	}
	state, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("react: snapshot: %w", err)
	}
	if bytes.Contains(state, []byte(`\ufffd`)) {
		// Text that is not valid UTF-8 (a model's call id, say) is written
		// with U+FFFD in its place, so the decoded state differs from the
		// run's; checksum the form the decoder will see.
		var canon snapState
		if err := json.Unmarshal(state, &canon); err != nil {
			return nil, fmt.Errorf("react: snapshot: %w", err)
		}
		if state, err = json.Marshal(canon); err != nil {
			return nil, fmt.Errorf("react: snapshot: %w", err)
		}
	}
	return json.Marshal(envelope{Format: SnapshotFormat, Version: SnapshotVersion, Checksum: checksum(state), State: state})
}

func checksum(state []byte) string {
	sum := sha256.Sum256(state)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON document")
	}
	return nil
}

// decodeSnapshot parses and checks a snapshot; see [ErrSnapshotForeign]
// and [ErrSnapshotCorrupt]. It never panics, whatever b holds.
func decodeSnapshot(b []byte) (*snapState, error) {
	var env struct {
		Format   *string         `json:"format"`
		Version  *int            `json:"version"`
		Checksum string          `json:"checksum"`
		State    json.RawMessage `json:"state"`
	}
	// The envelope is read leniently first, so that any JSON object that
	// is not ours is reported as foreign; bytes that are not a JSON object
	// at all (a truncated snapshot, say) are corrupt.
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %w", ErrSnapshotCorrupt, err)
	}
	if env.Format == nil || *env.Format != SnapshotFormat {
		return nil, ErrSnapshotForeign
	}
	if env.Version == nil || *env.Version != SnapshotVersion {
		return nil, fmt.Errorf("%w (version %v)", ErrSnapshotForeign, deref(env.Version))
	}
	var strict envelope
	if err := strictDecode(b, &strict); err != nil {
		return nil, fmt.Errorf("%w: envelope: %w", ErrSnapshotCorrupt, err)
	}
	var s snapState
	if err := strictDecode(strict.State, &s); err != nil {
		return nil, fmt.Errorf("%w: state: %w", ErrSnapshotCorrupt, err)
	}
	canon, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%w: state: %w", ErrSnapshotCorrupt, err)
	}
	if checksum(canon) != strict.Checksum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrSnapshotCorrupt)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSnapshotCorrupt, err)
	}
	return &s, nil
}

func deref(p *int) any {
	if p == nil {
		return "missing"
	}
	return *p
}

// check verifies the invariants the loop relies on.
func (s *snapState) check() error {
	if s.Run == "" {
		return errors.New("no run id")
	}
	if s.Status != Suspended && s.Status != Interrupted {
		return fmt.Errorf("status %v cannot be resumed", s.Status)
	}
	if s.Round < 0 || s.Stalls < 0 {
		return errors.New("negative counter")
	}
	if err := s.Node.validate(func(string) bool { return true }); err != nil {
		return err
	}
	if len(s.Transcript) == 0 || s.Transcript[0].Role != RoleUser {
		return errors.New("the transcript does not start with the user's words")
	}
	ids := make(map[string]bool)
	for i, m := range s.Transcript {
		switch m.Role {
		case RoleUser, RoleAssistant, RoleTool:
		default:
			return fmt.Errorf("message %d has role %q", i, m.Role)
		}
		for _, c := range m.ToolCalls {
			if c.ID == "" || ids[c.ID] {
				return fmt.Errorf("message %d has a missing or repeated call id", i)
			}
			ids[c.ID] = true
		}
	}
	for k, v := range s.Outputs {
		o, ok := s.Node.output(k)
		if !ok || !v.Source.IsValid() || !o.accepts(v.Source) || !json.Valid(v.Value) {
			return fmt.Errorf("output %q does not fit the node", k)
		}
	}
	if w := s.Wave; w != nil {
		if w.Message < 0 || w.Message >= len(s.Transcript) {
			return errors.New("wave outside the transcript")
		}
		calls := s.Transcript[w.Message].ToolCalls
		if s.Transcript[w.Message].Role != RoleAssistant || len(calls) == 0 {
			return errors.New("wave is not an assistant turn with tool calls")
		}
		if w.Next < 0 || w.Next >= len(calls) {
			return errors.New("wave position out of range")
		}
		answered := s.Transcript[w.Message+1:]
		if len(answered) != w.Next {
			return errors.New("wave position does not match the tool messages")
		}
		for k, m := range answered {
			if m.Role != RoleTool || m.ToolCallID != calls[k].ID {
				return errors.New("tool messages do not pair with the wave's calls")
			}
		}
		for k, p := range w.Invalid {
			if k < 0 || k >= len(calls) {
				return errors.New("malformed call outside the wave")
			}
			switch p.Kind {
			case problemNoID, problemIDRepeated, problemNoName:
			default:
				return fmt.Errorf("unknown call problem %q", p.Kind)
			}
		}
	}
	switch s.Status {
	case Suspended:
		p := s.Suspension
		if p == nil || s.Wave == nil {
			return errors.New("suspended without a pending call")
		}
		c := s.Transcript[s.Wave.Message].ToolCalls[s.Wave.Next]
		if c.ID != p.CallID {
			return errors.New("the pending call is not the wave's current call")
		}
		switch {
		case p.Kind == SuspendApproval && c.Name == ToolApproval && p.Approval != nil:
		case p.Kind == SuspendFollowUp && c.Name == ToolFollowUp && strings.TrimSpace(p.Question) != "":
		default:
			return errors.New("suspension does not match its call")
		}
	case Interrupted:
		if s.Suspension != nil {
			return errors.New("interrupted with a pending suspension")
		}
	default: // refused above
	}
	return nil
}

// restore rebuilds a run from a checked snapshot.
func (l *Loop) restore(ctx context.Context, s *snapState) (*run, error) {
	r, err := l.newRun(s.Run, s.Node)
	if err != nil {
		return nil, err
	}
	r.round, r.stalls, r.status = s.Round, s.Stalls, s.Status
	r.msgs = fromWire(s.Transcript)
	r.susp = s.Suspension
	r.answers = s.Answers
	r.userTexts = s.UserTexts
	r.writeFailed = s.WriteFailed
	r.calls = s.Calls
	r.restoreEvidenced()
	for k, v := range s.Outputs {
		r.outputs[k] = v
	}
	for _, a := range s.Answers {
		r.answered[normalize(a.Question)] = a.Answer
	}
	for _, m := range r.msgs[1:] {
		for _, c := range m.ToolCalls {
			r.ids[c.ID] = struct{}{}
		}
	}
	if w := s.Wave; w != nil {
		r.wave = &wave{msg: w.Message + 1, next: w.Next, invalid: w.Invalid}
	}
	if s.Status == Interrupted {
		r.status = 0
	}
	if ex, ok := l.ledger.(evidence.Exporter); ok && s.Evidence != nil {
		if err := ex.Import(ctx, s.Run, *s.Evidence); err != nil {
			return nil, fmt.Errorf("react: restore evidence: %w", err)
		}
	}
	return r, nil
}
