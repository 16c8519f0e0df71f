package react

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/outcome"
)

// The snapshot format. A snapshot is the JSON object
//
//	{"format":"reactguard.react.snapshot","version":3,"key":"…","mac":"hmac-sha256:…","state":{…}}
//
// sealed with HMAC-SHA256 under one of the loop's snapshot keys (see
// [Config].SnapshotKeys): key names the key by an id derived from it, and
// mac authenticates the format, the version, the key id and the state's
// canonical form. The canonical form is the state as this package encodes
// it after decoding it, and every value the model, the user or a tool
// provided (arguments, payloads, outputs) is kept as a JSON string, so a
// store may re-indent the document, reorder its keys, change how strings
// are escaped or round-trip it through a Go map (a jsonb column, say)
// without breaking the seal, while any change of content does. The
// state's fields are not API; the envelope's are. Version 3 added the
// run's owner and seals the time to the nanosecond; version 2 snapshots
// (sealed to the second, without owner) are still opened, as runs of the
// zero [Owner].
const (
	SnapshotFormat  = "reactguard.react.snapshot"
	SnapshotVersion = 3
)

// DefaultMaxSnapshotBytes is the size above which a snapshot is refused
// when [Config].MaxSnapshotBytes is 0: 64 MiB. Each result is kept once in
// a snapshot (the transcript refers to the evidence's copy when they are
// the same), so at the loop's default limits (20 rounds, results shown up
// to 32 KiB) it holds a run of 20 rounds of 100 calls each (about 63 MiB
// of results at the shown limit) or a run whose in-process evidence keeps
// 60 payloads at the evidence guard's 1 MiB bound; a run whose state
// outgrows it is interrupted with [ErrSnapshotTooLarge] when it would be
// sealed, so the loop never hands out a snapshot it would refuse.
const DefaultMaxSnapshotBytes = 64 << 20

// MinSnapshotKey is the length in bytes a snapshot key must have at least.
const MinSnapshotKey = 32

// Errors of [Loop.Resume] for snapshots it refuses. Each wraps
// [ErrSnapshot]: test with [errors.Is].
var (
	// ErrSnapshot is wrapped by every snapshot refusal: nothing was
	// resumed, and no store was changed.
	ErrSnapshot = errors.New("react: snapshot refused")
	// ErrSnapshotForeign: the document is not a snapshot of this package,
	// or of a version it does not read (version 1 snapshots were not
	// sealed and are refused).
	ErrSnapshotForeign = fmt.Errorf("%w: not a %s version %d", ErrSnapshot, SnapshotFormat, SnapshotVersion)
	// ErrSnapshotCorrupt: the document is a snapshot of this package, but
	// it does not parse or its state is inconsistent.
	ErrSnapshotCorrupt = fmt.Errorf("%w: corrupt", ErrSnapshot)
	// ErrSnapshotKey: the snapshot was sealed under a key this loop does
	// not hold (another process's key, or a key retired from
	// Config.SnapshotKeys).
	ErrSnapshotKey = fmt.Errorf("%w: sealed under a key this loop does not hold", ErrSnapshot)
	// ErrSnapshotSeal: the snapshot's seal does not match its content: it
	// was changed after it was sealed.
	ErrSnapshotSeal = fmt.Errorf("%w: the seal does not match the content", ErrSnapshot)
	// ErrSnapshotExpired: the snapshot was sealed longer ago than
	// Config.SnapshotMaxAge allows.
	ErrSnapshotExpired = fmt.Errorf("%w: expired", ErrSnapshot)
	// ErrSnapshotTooLarge: the snapshot is larger than
	// Config.MaxSnapshotBytes. It is refused before any of it is read,
	// authenticated or decoded; a run whose snapshot would be larger is
	// interrupted with this error instead of being sealed.
	ErrSnapshotTooLarge = fmt.Errorf("%w: larger than Config.MaxSnapshotBytes", ErrSnapshot)
	// ErrSnapshotRun: [Loop.ResumeRun] or [Loop.Pending] found, under a run
	// id, a snapshot of another run (a run store that mixed its records up,
	// or was edited).
	ErrSnapshotRun = fmt.Errorf("%w: it belongs to another run", ErrSnapshot)
)

// ErrAlreadyResumed is returned by [Loop.Resume] for a snapshot that was
// resumed before: every snapshot is claimed by one resume (see
// [Config].Claims), and a second resume, sequential or concurrent, in this
// process or another sharing the claims, executes nothing. The run goes on
// in the resume that claimed it; its result (or the run store) has the
// run's current state. A snapshot whose resume died before it settled is
// not refused by a durable claim store: see [Loop.Resume].
var ErrAlreadyResumed = errors.New("react: snapshot already resumed")

// sealKey is one snapshot key and its id.
type sealKey struct {
	id  string
	key []byte
}

func newSealKey(k []byte) sealKey {
	sum := sha256.Sum256(append([]byte("reactguard snapshot key id\x00"), k...))
	return sealKey{id: hex.EncodeToString(sum[:8]), key: bytes.Clone(k)}
}

// mac authenticates state of the given snapshot format version under k.
func (k sealKey) mac(version int, state []byte) string {
	return k.macOf(SnapshotFormat, version, state)
}

// macOf authenticates state of the given format and version under k: the
// format is part of what is authenticated, so a state sealed as one
// format (a thread's turn) never opens as another (a snapshot).
func (k sealKey) macOf(format string, version int, state []byte) string {
	h := hmac.New(sha256.New, k.key)
	_, _ = fmt.Fprintf(h, "%s\x00%d\x00%s\x00", format, version, k.id) // a hash.Hash never fails
	h.Write(state)
	return "hmac-sha256:" + hex.EncodeToString(h.Sum(nil))
}

// processKey is the snapshot key of loops configured without keys: random,
// drawn once per process.
var processKey = sync.OnceValue(func() sealKey {
	b := make([]byte, MinSnapshotKey)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return newSealKey(b)
})

// sealKeys validates the configured keys and returns them with their ids;
// none configured means the process key.
func sealKeys(keys [][]byte) ([]sealKey, error) {
	if len(keys) == 0 {
		return []sealKey{processKey()}, nil
	}
	out := make([]sealKey, len(keys))
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		if len(k) < MinSnapshotKey {
			return nil, fmt.Errorf("react: Config.SnapshotKeys[%d] has %d bytes; a key needs at least %d random bytes (crypto/rand)", i, len(k), MinSnapshotKey)
		}
		out[i] = newSealKey(k)
		if seen[out[i].id] {
			return nil, fmt.Errorf("react: Config.SnapshotKeys[%d] repeats an earlier key", i)
		}
		seen[out[i].id] = true
	}
	return out, nil
}

type envelope struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Key     string          `json:"key"`
	MAC     string          `json:"mac"`
	State   json.RawMessage `json:"state"`
}

// snapState is the sealed state of a stopped run. Values that came from the
// model, the user or a tool and hold JSON are kept as strings (see the
// format above).
type snapState struct {
	ID          string                `json:"id"`                         // the snapshot's identity, claimed by one resume
	Sealed      int64                 `json:"sealed,omitempty"`           // version 2: Unix seconds
	SealedNano  int64                 `json:"sealed_ns,omitempty,string"` // version 3: Unix nanoseconds, as a JSON string (exact through float64 decoders)
	Run         string                `json:"run"`
	Owner       Owner                 `json:"owner,omitzero"`
	Node        Node                  `json:"node"`
	Status      Status                `json:"status"`
	Round       int                   `json:"round"`
	Stalls      int                   `json:"stalls"`
	Transcript  []wireMessage         `json:"transcript"`
	Wave        *wireWave             `json:"wave,omitempty"`
	Outputs     map[string]wireOutput `json:"outputs,omitempty"`
	Suspension  *wireSuspension       `json:"suspension,omitempty"`
	Answers     []qa                  `json:"answers,omitempty"`
	UserTexts   []string              `json:"user_texts,omitempty"`
	WriteFailed bool                  `json:"write_failed,omitempty"`
	Evidence    *wireEvidence         `json:"evidence,omitempty"`
	Calls       []CallReport          `json:"calls,omitempty"`
	Carry       map[string]string     `json:"carry,omitempty"`  // RunObserver.Carry, within MaxCarried*
	Inputs      *wireInputs           `json:"inputs,omitempty"` // WithInputs: what the system message shows
	Host        *wireHost             `json:"host,omitempty"`   // WithHostState
	Thread      *wireThread           `json:"thread,omitempty"`
	NoCalls     int                   `json:"no_calls,omitempty"` // the stalls counted for rounds without a tool call

	key *sealKey // the key that sealed it, once opened; not part of the state
}

// sealedAt returns when the snapshot was sealed.
func (s *snapState) sealedAt() time.Time { return time.Unix(0, s.SealedNano) }

type wireWave struct {
	Message int             `json:"message"`
	Next    int             `json:"next"`
	Invalid map[int]problem `json:"invalid,omitempty"`
}

// wireMessage is a Message whose call arguments are kept as text, so that
// arguments that are not JSON survive the round trip.
type wireMessage struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// PayloadOf names the call whose evidence record's payload completes
	// Content (the message is Content followed by it): a result is kept
	// once in a snapshot, in the evidence.
	PayloadOf  string     `json:"payload_of,omitempty"`
	ToolCalls  []wireCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	IsError    bool       `json:"is_error,omitempty"`
	Parts      []Part     `json:"parts,omitempty"` // Data as base64
}

type wireCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args"`
}

type wireOutput struct {
	Value  string     `json:"value"`
	Source SourceType `json:"source"`
	Ref    string     `json:"ref,omitempty"`
}

type wireSuspension struct {
	Kind     SuspensionKind `json:"kind"`
	CallID   string         `json:"call_id"`
	Approval *wirePending   `json:"approval,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Question string         `json:"question,omitempty"`
}

type wirePending struct {
	CallID      string `json:"call_id"`
	Tool        string `json:"tool"`
	Args        string `json:"args,omitempty"`
	Fingerprint string `json:"fingerprint"`
}

type wireEvidence struct {
	Records   []wireRecord `json:"records,omitempty"`
	UserTexts []string     `json:"user_texts,omitempty"`
}

type wireRecord struct {
	CallID      string          `json:"call_id"`
	Tool        string          `json:"tool"`
	Fingerprint string          `json:"fingerprint,omitempty"`
	Outcome     outcome.Outcome `json:"outcome"`
	Code        errcode.Code    `json:"code,omitempty"`
	Payload     string          `json:"payload,omitempty"`
	PayloadRef  string          `json:"payload_ref,omitempty"`
	Attempt     int             `json:"attempt"`
	Round       int             `json:"round"`
	Provenance  *wireProvenance `json:"provenance,omitempty"` // absent in snapshots sealed before records had one
}

// wireProvenance is an evidence.Provenance with its time as Unix
// microseconds in a JSON string (Provenance.Clean keeps microseconds), so
// that the form is canonical.
type wireProvenance struct {
	FetchedAt      int64  `json:"fetched_us,omitempty,string"`
	Source         string `json:"source,omitempty"`
	ObjectID       string `json:"object_id,omitempty"`
	Version        string `json:"version,omitempty"`
	Voucher        string `json:"voucher,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

func toWireProvenance(p evidence.Provenance) *wireProvenance {
	p = p.Clean()
	if p.IsZero() {
		return nil
	}
	w := &wireProvenance{Source: p.Source, ObjectID: p.ObjectID, Version: p.Version, Voucher: p.Voucher, IdempotencyKey: p.IdempotencyKey}
	if !p.FetchedAt.IsZero() {
		w.FetchedAt = p.FetchedAt.UnixMicro()
	}
	return w
}

func (w *wireProvenance) provenance() evidence.Provenance {
	if w == nil {
		return evidence.Provenance{}
	}
	p := evidence.Provenance{Source: w.Source, ObjectID: w.ObjectID, Version: w.Version, Voucher: w.Voucher, IdempotencyKey: w.IdempotencyKey}
	if w.FetchedAt != 0 {
		p.FetchedAt = time.UnixMicro(w.FetchedAt).UTC()
	}
	return p.Clean()
}

// wireInputs is what [WithInputs] gave a run, for its system message; the
// values are JSON text, as every value in a snapshot.
type wireInputs struct {
	Steps    []wireInput `json:"steps,omitempty"`
	Statuses []StepState `json:"statuses,omitempty"`
}

type wireInput struct {
	Step    string            `json:"step"`
	Outputs map[string]string `json:"outputs,omitempty"`
}

func toWireInputs(in *Inputs) *wireInputs {
	if in == nil {
		return nil
	}
	w := &wireInputs{Statuses: in.Statuses}
	for _, s := range in.Steps {
		wi := wireInput{Step: s.Step, Outputs: make(map[string]string, len(s.Outputs))}
		for k, v := range s.Outputs {
			wi.Outputs[k] = string(v)
		}
		w.Steps = append(w.Steps, wi)
	}
	return w
}

func (w *wireInputs) inputs() *Inputs {
	if w == nil {
		return nil
	}
	in := &Inputs{Statuses: w.Statuses}
	for _, s := range w.Steps {
		i := Input{Step: s.Step, Outputs: make(map[string]json.RawMessage, len(s.Outputs))}
		for k, v := range s.Outputs {
			i.Outputs[k] = json.RawMessage(v)
		}
		in.Steps = append(in.Steps, i)
	}
	return in
}

func toWire(msgs []Message) []wireMessage {
	out := make([]wireMessage, len(msgs))
	for i, m := range msgs {
		w := wireMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError, Parts: m.Parts}
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
		m := Message{Role: w.Role, Content: w.Content, ToolCallID: w.ToolCallID, ToolName: w.ToolName, IsError: w.IsError, Parts: w.Parts}
		if len(w.ToolCalls) > 0 {
			m.ToolCalls = make([]ToolCall, len(w.ToolCalls))
			for k, c := range w.ToolCalls {
				m.ToolCalls[k] = ToolCall{ID: c.ID, Name: c.Name, Args: rawOrNil(c.Args)}
			}
		}
		out = append(out, m)
	}
	return out
}

// rawOrNil returns s as raw bytes, or nil for "".
func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func toWireSuspension(s *Suspension) *wireSuspension {
	if s == nil {
		return nil
	}
	w := &wireSuspension{Kind: s.Kind, CallID: s.CallID, Reason: s.Reason, Question: s.Question}
	if p := s.Approval; p != nil {
		w.Approval = &wirePending{CallID: p.CallID, Tool: p.Tool, Args: string(p.Args), Fingerprint: p.Fingerprint}
	}
	return w
}

func (w *wireSuspension) suspension() *Suspension {
	if w == nil {
		return nil
	}
	s := &Suspension{Kind: w.Kind, CallID: w.CallID, Reason: w.Reason, Question: w.Question}
	if p := w.Approval; p != nil {
		s.Approval = &PendingWrite{CallID: p.CallID, Tool: p.Tool, Args: jsonOrText([]byte(p.Args)), Fingerprint: p.Fingerprint}
	}
	return s
}

func toWireEvidence(s evidence.Snapshot) *wireEvidence {
	w := &wireEvidence{UserTexts: s.UserTexts}
	if len(s.Records) > 0 {
		w.Records = make([]wireRecord, len(s.Records))
	}
	for i, r := range s.Records {
		w.Records[i] = wireRecord{CallID: r.CallID, Tool: r.Tool, Fingerprint: r.Fingerprint, Outcome: r.Outcome, Code: r.Code,
			Payload: string(r.Payload), PayloadRef: r.PayloadRef, Attempt: r.Attempt, Round: r.Round, Provenance: toWireProvenance(r.Provenance)}
	}
	return w
}

func (w *wireEvidence) snapshot() evidence.Snapshot {
	s := evidence.Snapshot{UserTexts: w.UserTexts}
	if len(w.Records) > 0 {
		s.Records = make([]evidence.Record, len(w.Records))
	}
	for i, r := range w.Records {
		s.Records[i] = evidence.Record{CallID: r.CallID, Tool: r.Tool, Fingerprint: r.Fingerprint, Outcome: r.Outcome, Code: r.Code,
			Payload: rawOrNil(r.Payload), PayloadRef: r.PayloadRef, Attempt: r.Attempt, Round: r.Round, Provenance: r.Provenance.provenance()}
	}
	return s
}

// snapshot seals the run's state.
func (r *run) snapshot(ctx context.Context) ([]byte, error) {
	s := snapState{
		ID:          uuid.NewString(),
		SealedNano:  r.l.now().UnixNano(),
		Run:         r.id,
		Owner:       r.owner,
		Node:        r.node,
		Status:      r.status,
		Round:       r.round,
		Stalls:      r.stalls,
		Transcript:  toWire(r.msgs[1:]),
		Suspension:  toWireSuspension(r.susp),
		Answers:     r.answers,
		UserTexts:   r.userTexts,
		WriteFailed: r.writeFailed,
		Calls:       r.calls,
		Carry:       r.carry(ctx),
		Inputs:      toWireInputs(r.inputs),
		Host:        r.host,
		Thread:      r.thread.wire(),
		NoCalls:     r.noCalls,
	}
	if len(r.outputs) > 0 {
		s.Outputs = make(map[string]wireOutput, len(r.outputs))
		for k, v := range r.outputs {
			s.Outputs[k] = wireOutput{Value: string(v.Value), Source: v.Source, Ref: v.Ref}
		}
	}
	if w := r.wave; w != nil {
		s.Wave = &wireWave{Message: w.msg - 1, Next: w.next, Invalid: w.invalid}
	}
	if ex, ok := r.l.ledger.(evidence.Exporter); ok {
		ev, err := ex.Export(ctx, r.id)
		if err != nil {
			return nil, fmt.Errorf("react: snapshot: evidence: %w", err)
		}
		s.Evidence = toWireEvidence(ev)
		keepPayloadsOnce(s.Transcript, s.Evidence)
	}
	b, err := r.l.seal(&s)
	if err != nil {
		return nil, err
	}
	if s.Suspension != nil && r.susp != nil {
		r.ticket = r.l.keys[0].ticket(&s)
	}
	return b, nil
}

// keepPayloadsOnce replaces, in the transcript, the payload that ends a
// tool message by a reference to the evidence record that holds the same
// bytes, so that a snapshot keeps each result once.
func keepPayloadsOnce(ws []wireMessage, ev *wireEvidence) {
	payloads := make(map[string]string, len(ev.Records))
	for _, rec := range ev.Records {
		if rec.Outcome == outcome.Success && rec.Payload != "" {
			payloads[rec.CallID] = rec.Payload // the latest successful attempt
		}
	}
	for i := range ws {
		w := &ws[i]
		if w.Role != RoleTool || w.ToolCallID == "" {
			continue
		}
		if p, ok := payloads[w.ToolCallID]; ok && strings.HasSuffix(w.Content, p) {
			w.Content, w.PayloadOf = w.Content[:len(w.Content)-len(p)], w.ToolCallID
		}
	}
}

// expandPayloads undoes keepPayloadsOnce; it reports a reference to a
// payload the evidence does not hold.
func (s *snapState) expandPayloads() error {
	var payloads map[string]string
	for i := range s.Transcript {
		w := &s.Transcript[i]
		if w.PayloadOf == "" {
			continue
		}
		if payloads == nil {
			payloads = make(map[string]string)
			if s.Evidence != nil {
				for _, rec := range s.Evidence.Records {
					if rec.Outcome == outcome.Success && rec.Payload != "" {
						payloads[rec.CallID] = rec.Payload
					}
				}
			}
		}
		p, ok := payloads[w.PayloadOf]
		if !ok || w.Role != RoleTool || w.PayloadOf != w.ToolCallID {
			return fmt.Errorf("message %d refers to a payload the snapshot does not hold", i)
		}
		w.Content, w.PayloadOf = w.Content+p, ""
	}
	return nil
}

// seal encodes s in its canonical form and seals it under the loop's first
// key. The canonical form is reached by decoding the encoding once more:
// encoding/json replaces invalid UTF-8, and a second encoding of the
// decoded value is then a fixed point, so what is sealed is exactly what
// decoding a sealed snapshot and encoding it again gives.
func (l *Loop) seal(s *snapState) ([]byte, error) {
	first, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("react: snapshot: %w", err)
	}
	var canon snapState
	if err := strictDecode(first, &canon); err != nil {
		return nil, fmt.Errorf("react: snapshot: %w", err)
	}
	state, err := json.Marshal(&canon)
	if err != nil {
		return nil, fmt.Errorf("react: snapshot: %w", err)
	}
	k := l.keys[0]
	b, err := json.Marshal(envelope{Format: SnapshotFormat, Version: SnapshotVersion, Key: k.id, MAC: k.mac(SnapshotVersion, state), State: state})
	if err != nil {
		return nil, fmt.Errorf("react: snapshot: %w", err)
	}
	if l.maxSnap > 0 && len(b) > l.maxSnap {
		return nil, fmt.Errorf("%w: the run's state takes %d bytes, the bound is %d; raise Config.MaxSnapshotBytes, lower MaxResultBytes, or keep evidence in a durable store", ErrSnapshotTooLarge, len(b), l.maxSnap)
	}
	return b, nil
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

// open checks a snapshot's envelope, its key, its seal, its age and its
// state, in that order; see the errors wrapping [ErrSnapshot]. It never
// panics, whatever b holds.
func (l *Loop) open(b []byte) (*snapState, error) {
	if l.maxSnap > 0 && len(b) > l.maxSnap {
		return nil, fmt.Errorf("%w: %d bytes, the bound is %d", ErrSnapshotTooLarge, len(b), l.maxSnap)
	}
	var lenient struct {
		Format  *string `json:"format"`
		Version *int    `json:"version"`
	}
	// The envelope is read leniently first, so that any JSON object that
	// is not ours is reported as foreign; bytes that are not a JSON object
	// at all (a truncated snapshot, say) are corrupt.
	if err := json.Unmarshal(b, &lenient); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %w", ErrSnapshotCorrupt, err)
	}
	if lenient.Format == nil || *lenient.Format != SnapshotFormat {
		return nil, ErrSnapshotForeign
	}
	if lenient.Version == nil || (*lenient.Version != SnapshotVersion && *lenient.Version != 2) {
		return nil, fmt.Errorf("%w (version %v)", ErrSnapshotForeign, deref(lenient.Version))
	}
	var env envelope
	if err := strictDecode(b, &env); err != nil {
		return nil, fmt.Errorf("%w: envelope: %w", ErrSnapshotCorrupt, err)
	}
	var key *sealKey
	for i := range l.keys {
		if l.keys[i].id == env.Key {
			key = &l.keys[i]
			break
		}
	}
	if key == nil {
		return nil, fmt.Errorf("%w (key id %q); to resume in another process, give both the same Config.SnapshotKeys", ErrSnapshotKey, env.Key)
	}
	var s snapState
	if err := strictDecode(env.State, &s); err != nil {
		return nil, fmt.Errorf("%w: state: %w", ErrSnapshotCorrupt, err)
	}
	canon, err := json.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("%w: state: %w", ErrSnapshotCorrupt, err)
	}
	if !hmac.Equal([]byte(key.mac(env.Version, canon)), []byte(env.MAC)) {
		return nil, ErrSnapshotSeal
	}
	switch {
	case env.Version == 2 && (s.Owner != (Owner{}) || s.SealedNano != 0):
		return nil, fmt.Errorf("%w: a version 2 state with fields of version 3", ErrSnapshotCorrupt)
	case env.Version == 2:
		s.SealedNano, s.Sealed = s.Sealed*int64(time.Second), 0
	case s.Sealed != 0 || s.SealedNano == 0:
		return nil, fmt.Errorf("%w: the seal time is missing", ErrSnapshotCorrupt)
	}
	if max := l.maxAge; max > 0 {
		if age := l.now().Sub(s.sealedAt()); age > max {
			return nil, fmt.Errorf("%w: sealed %v ago, Config.SnapshotMaxAge is %v", ErrSnapshotExpired, age, max)
		}
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSnapshotCorrupt, err)
	}
	if err := s.expandPayloads(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSnapshotCorrupt, err)
	}
	s.key = key
	return &s, nil
}

func deref(p *int) any {
	if p == nil {
		return "missing"
	}
	return *p
}

// check verifies the invariants the loop relies on. A sealed snapshot
// passes them (the loop never seals an inconsistent state); they are
// checked anyway, so that a leaked key does not turn into a crash.
func (s *snapState) check() error {
	if s.ID == "" || s.Run == "" {
		return errors.New("no snapshot or run id")
	}
	if err := checkRunID(s.Run); err != nil {
		return err
	}
	if err := s.Owner.Check(); err != nil {
		return err
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
		if len(m.Parts) > 0 && (m.Role != RoleAssistant || len(keptParts(m.Parts, len(m.ToolCalls))) != len(m.Parts)) {
			return fmt.Errorf("message %d has parts that do not fit its calls", i)
		}
	}
	if err := s.Thread.check(); err != nil {
		return err
	}
	if s.NoCalls < 0 || s.NoCalls > s.Stalls {
		return errors.New("stalls without a tool call out of range")
	}
	if len(s.Carry) > MaxCarried {
		return errors.New("too many carried entries")
	}
	if h := s.Host; h != nil && (h.Kind == "" || len(h.Kind) > MaxToolName || len(h.State) > MaxHostState) {
		return errors.New("host state out of bounds")
	}
	if in := s.Inputs; in != nil {
		for _, st := range in.Statuses {
			if st.Step == "" || st.Status == StepNone {
				return errors.New("a step status without a step or a status")
			}
		}
		for _, st := range in.Steps {
			if st.Step == "" {
				return errors.New("an input without a step")
			}
		}
	}
	for k, v := range s.Carry {
		if !carriable(k, v) {
			return errors.New("a carried entry is out of bounds")
		}
	}
	for k, v := range s.Outputs {
		o, ok := s.Node.output(k)
		if !ok || !v.Source.IsValid() || !o.accepts(v.Source) || !json.Valid([]byte(v.Value)) {
			return fmt.Errorf("output %q does not fit the node", k)
		}
	}
	if s.Evidence != nil {
		for i, r := range s.Evidence.snapshot().Records {
			if err := evidence.Check(r); err != nil {
				return fmt.Errorf("evidence record %d: %w", i, err)
			}
		}
	}
	if w := s.Wave; w != nil {
		if err := s.checkWave(w); err != nil {
			return err
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
		case p.Kind == SuspendApproval && s.Node.HostApproval && p.Approval != nil &&
			p.Approval.CallID == c.ID && p.Approval.Tool == c.Name && !isBuiltin(c.Name):
			// Node.HostApproval: the run suspended at the deferred write.
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

func (s *snapState) checkWave(w *wireWave) error {
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
		case problemNoID, problemIDRepeated, problemNoName, problemIDTooLong, problemNameTooLong:
		case problemCutOff:
			if !CutOff(p.Reason) {
				return fmt.Errorf("call cut off for the finish reason %q", p.Reason)
			}
		default:
			return fmt.Errorf("unknown call problem %q", p.Kind)
		}
	}
	return nil
}

// fits reports whether d is a decision the snapshot waits for; the error
// wraps [ErrDecision].
func (s *snapState) fits(d Decision) error {
	switch s.Status {
	case Interrupted:
		if d.kind != decideContinue {
			return fmt.Errorf("%w: the run was interrupted; resume it with Continue, not %s", ErrDecision, d)
		}
	case Suspended:
		switch k := s.Suspension.Kind; {
		case k == SuspendApproval && (d.kind == decideApprove || d.kind == decideDecline):
		case k == SuspendFollowUp && d.kind == decideAnswer:
			if strings.TrimSpace(d.text) == "" {
				return fmt.Errorf("%w: the answer to a follow-up is empty", ErrDecision)
			}
		default:
			return fmt.Errorf("%w: the run waits for %s, not %s", ErrDecision, k, d)
		}
	default: // open accepts no other status
	}
	return nil
}

// restore rebuilds a run from an opened snapshot. It changes no store: the
// evidence is imported by importEvidence once the snapshot is claimed.
func (l *Loop) restore(s *snapState) (*run, error) {
	r, err := l.newRun(s.Run, s.Node)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	r.round, r.stalls, r.status, r.owner = s.Round, s.Stalls, s.Status, s.Owner
	r.msgs = fromWire(s.Transcript)
	r.susp = s.Suspension.suspension()
	r.answers = s.Answers
	r.userTexts = s.UserTexts
	r.writeFailed = s.WriteFailed
	r.calls = s.Calls
	r.thread, r.noCalls = s.Thread.run(), s.NoCalls
	r.restoreEvidenced()
	r.restoreCheck()
	r.inputs, r.host = s.Inputs.inputs(), s.Host
	if r.inputs != nil {
		for _, in := range r.inputs.Steps {
			r.ids[evidence.StepRef(in.Step)] = struct{}{} // no model call may take the id
		}
	}
	for k, v := range s.Outputs {
		r.setOutput(k, OutputValue{Value: json.RawMessage(v.Value), Source: v.Source, Ref: v.Ref})
	}
	for _, a := range s.Answers {
		r.setAnswered(a.Question, a.Answer)
	}
	for _, m := range r.msgs[1:] {
		for _, c := range m.ToolCalls {
			r.ids[c.ID] = struct{}{}
		}
	}
	if w := s.Wave; w != nil {
		r.w = wave{msg: w.Message + 1, next: w.Next, invalid: w.Invalid}
		r.wave = &r.w
	}
	if s.Status == Interrupted {
		r.status = 0
	}
	return r, nil
}

// importEvidence merges the snapshot's evidence into an in-process ledger.
func (l *Loop) importEvidence(ctx context.Context, s *snapState) error {
	ex, ok := l.ledger.(evidence.Exporter)
	if !ok || s.Evidence == nil {
		return nil
	}
	if err := ex.Import(ctx, s.Run, s.Evidence.snapshot()); err != nil {
		return fmt.Errorf("%w: react: restore evidence: %w", ErrSnapshot, err)
	}
	return nil
}
