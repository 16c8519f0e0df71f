package react

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/tool"
)

func scripted(turns ...Response) Model {
	n := 0
	return ModelFunc(func(context.Context, Request) (Response, error) {
		if n >= len(turns) {
			return Response{}, errors.New("no more turns")
		}
		n++
		return turns[n-1], nil
	})
}

func calls(cs ...ToolCall) Response { return Response{ToolCalls: cs} }

// suspendedState runs a node to a follow-up suspension after a write was
// deferred and returns its decoded snapshot state.
func suspendedState(t testing.TB) (*Loop, *snapState) {
	t.Helper()
	create := &tool.Tool{Name: "create_site", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
		Func: func(context.Context, tool.Request) (any, error) { return 1, nil }}
	l, err := New(Config{
		Model: scripted(
			calls(ToolCall{ID: "w", Name: "create_site", Args: json.RawMessage(`{}`)}),
			calls(
				ToolCall{ID: "s", Name: ToolOutputSet, Args: json.RawMessage(`{"key":"k","value":1,"sourceType":"model"}`)},
				ToolCall{ID: "q", Name: ToolFollowUp, Args: json.RawMessage(`{"question":"Which name?"}`)},
				ToolCall{ID: "", Name: "create_site", Args: json.RawMessage(`{`)},
			),
		),
		Tools:    tool.MustCatalog(create),
		Observer: DiscardObserver,
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Run(context.Background(), Node{Tools: []string{"create_site"}, Outputs: []Output{{Key: "k", Accepts: []SourceType{SourceModel}}}}, "hi")
	if err != nil || res.Status != Suspended {
		t.Fatalf("Run = %v, %v; want suspended", res.Status, err)
	}
	s, err := l.open(res.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}

// resealed seals s under l's key as it is, without the canonical pass: the
// work of someone who holds the key.
func resealed(t *testing.T, l *Loop, s *snapState) []byte {
	t.Helper()
	state, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(envelope{Format: SnapshotFormat, Version: SnapshotVersion, Key: l.keys[0].id, MAC: l.keys[0].mac(SnapshotVersion, state), State: state})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every invariant the loop relies on is checked, even for a sealed
// snapshot (an edit by someone who holds the key must not crash the loop).
func TestSnapshotCheck(t *testing.T) {
	tests := []struct {
		name string
		edit func(s *snapState)
	}{
		{"no run", func(s *snapState) { s.Run = "" }},
		{"finished", func(s *snapState) { s.Status = Finished }},
		{"negative round", func(s *snapState) { s.Round = -1 }},
		{"invalid node", func(s *snapState) { s.Node.MaxRounds = -5 }},
		{"empty transcript", func(s *snapState) { s.Transcript = nil }},
		{"starts with assistant", func(s *snapState) { s.Transcript[0].Role = RoleAssistant }},
		{"unknown role", func(s *snapState) { s.Transcript[1].Role = "robot" }},
		{"repeated id", func(s *snapState) { s.Transcript[3].ToolCalls[1].ID = "w" }},
		{"undeclared output", func(s *snapState) { s.Outputs = map[string]wireOutput{"x": {Value: "1", Source: SourceModel}} }},
		{"output source not accepted", func(s *snapState) { s.Outputs = map[string]wireOutput{"k": {Value: "1", Source: SourceUser}} }},
		{"output not JSON", func(s *snapState) { s.Outputs = map[string]wireOutput{"k": {Value: "{", Source: SourceModel}} }},
		{"no snapshot id", func(s *snapState) { s.ID = "" }},
		{"evidence not executed", func(s *snapState) {
			s.Evidence = &wireEvidence{Records: []wireRecord{{CallID: "w", Tool: "create_site", Outcome: outcome.Rejected, Attempt: 1}}}
		}},
		{"wave outside", func(s *snapState) { s.Wave.Message = 99 }},
		{"wave on a tool message", func(s *snapState) { s.Wave.Message = 2 }},
		{"wave position", func(s *snapState) { s.Wave.Next = 7 }},
		{"wave position mismatch", func(s *snapState) { s.Wave.Next = 0 }},
		{"tool message unpaired", func(s *snapState) { s.Transcript[4].ToolCallID = "other" }},
		{"invalid index", func(s *snapState) { s.Wave.Invalid = map[int]problem{9: {Kind: problemNoID}} }},
		{"invalid kind", func(s *snapState) { s.Wave.Invalid = map[int]problem{0: {Kind: "weird"}} }},
		{"no suspension", func(s *snapState) { s.Suspension = nil }},
		{"suspension call", func(s *snapState) { s.Suspension.CallID = "w" }},
		{"suspension kind", func(s *snapState) { s.Suspension.Kind = SuspendApproval }},
		{"interrupted with suspension", func(s *snapState) { s.Status = Interrupted }},
		{"carried empty key", func(s *snapState) { s.Carry = map[string]string{"": "v"} }},
		{"carried key too long", func(s *snapState) { s.Carry = map[string]string{strings.Repeat("k", MaxCarriedKey+1): "v"} }},
		{"carried value too long", func(s *snapState) { s.Carry = map[string]string{"k": strings.Repeat("v", MaxCarriedValue+1)} }},
		{"carried too many", func(s *snapState) {
			s.Carry = map[string]string{}
			for i := range MaxCarried + 1 {
				s.Carry[strconv.Itoa(i)] = "v"
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, s := suspendedState(t)
			if err := s.check(); err != nil {
				t.Fatalf("unedited state: %v", err)
			}
			tt.edit(s)
			b := resealed(t, l, s)
			if _, err := l.Resume(context.Background(), b, Answer(l.keys[0].ticket(s), "blog")); !errors.Is(err, ErrSnapshotCorrupt) {
				t.Errorf("Resume(%s) = %v; want ErrSnapshotCorrupt", tt.name, err)
			}
		})
	}
}

func TestSnapshotRestoreNeedsCatalog(t *testing.T) {
	l, s := suspendedState(t)
	b := resealed(t, l, s)
	other, _ := New(Config{Model: scripted(), Observer: DiscardObserver})
	if _, err := other.Resume(context.Background(), b, Answer(l.keys[0].ticket(s), "blog")); !errors.Is(err, ErrInvalidNode) || !errors.Is(err, ErrSnapshot) {
		t.Errorf("Resume on a loop without create_site = %v; want ErrInvalidNode and ErrSnapshot", err)
	}
	if _, err := l.Resume(context.Background(), b, Answer(l.keys[0].ticket(s), "blog")); errors.Is(err, ErrAlreadyResumed) || errors.Is(err, ErrSnapshot) || errors.Is(err, ErrTicket) {
		t.Errorf("Resume of the same snapshot in its own loop = %v; want it unclaimed by the refusal", err)
	}
}

func TestHoldsAt(t *testing.T) {
	payload := []byte(`{"balance":120.5,"limit":500,"account":{"id":"A-1","owner":{"name":"Li"}},"sites":[{"id":7,"tags":["a","b"]},{"id":8}],"root":[1,2]}`)
	tests := []struct {
		field, value string
		want         bool
		why          string
	}{
		{"balance", `120.5`, true, "a number by value"},
		{"balance", `120.50`, true, "in another form"},
		{"balance", `"120.5"`, true, "as text, as holds compares scalars"},
		{"balance", `500`, false, "the limit's value, copied from the wrong field"},
		{"limit", `500`, true, "the other field"},
		{"account.id", `"A-1"`, true, "a nested field"},
		{"id", `"A-1"`, false, "the path is the whole path, not a suffix"},
		{"account.owner.name", `"Li"`, true, "deeper"},
		{"sites.id", `8`, true, "arrays walked: any element"},
		{"sites.id", `9`, false, "no element"},
		{"sites.tags", `"b"`, true, "an element of an array field"},
		{"sites.tags", `["a","b"]`, true, "the array itself"},
		{"account", `{"owner":{"name":"Li"},"id":"A-1"}`, true, "an object, canonically"},
		{"account", `{"id":"A-1"}`, false, "not a sub-object"},
		{"sites", `{"id":8}`, true, "an object element of an array field"},
		{"", `{"id":8}`, false, "the whole payload is not that object"},
		{"root", `[1,2]`, true, "an array field"},
		{"nope", `1`, false, "no such field"},
		{"balance", `{`, false, "not JSON"},
	}
	for _, tt := range tests {
		if got := holdsAt(payload, tt.field, []byte(tt.value)); got != tt.want {
			t.Errorf("holdsAt(payload, %q, %s) = %v; want %v (%s)", tt.field, tt.value, got, tt.want, tt.why)
		}
	}
	if !holdsAt([]byte(`[{"a":1}]`), "", []byte(`{"a":1}`)) {
		t.Error("an element of a payload that is an array, at the whole payload")
	}
	if !holdsAt([]byte(`{"a":1}`), "", []byte(`{"a":1}`)) {
		t.Error("the whole payload at \"\"")
	}
	if holdsAt([]byte(`not json`), "a", []byte(`{"a":1}`)) || holdsAt([]byte(`{"a":[1]} x`), "a", []byte(`[1]`)) {
		t.Error("a payload that is not JSON holds nothing")
	}
}

func TestHolds(t *testing.T) {
	payload := []byte(`{"sites":[{"id":7,"tags":["a","b"]},{"id":8.0}],"ok":true}`)
	tests := []struct {
		value string
		want  bool
	}{
		{`7`, true}, {`"7"`, true}, {`8`, true}, {`true`, true}, {`"a"`, true},
		{`9`, false}, {`null`, false}, {`{"id":7}`, false},
		{`{"tags":["a","b"],"id":7}`, true}, {`["a","b"]`, true}, {`["b","a"]`, false},
		{`{`, false},
	}
	for _, tt := range tests {
		if got := holds(payload, []byte(tt.value)); got != tt.want {
			t.Errorf("holds(payload, %s) = %v; want %v", tt.value, got, tt.want)
		}
	}
	if holds([]byte(`not json`), []byte(`{"a":1}`)) {
		t.Error("a payload that is not JSON holds nothing")
	}
	if got := string(compact([]byte("{ \"a\" : 1 }"))); got != `{"a":1}` {
		t.Errorf("compact = %s", got)
	}
	if got := string(compact([]byte("{"))); got != "{" {
		t.Errorf("compact(invalid) = %s; want the bytes unchanged", got)
	}
	if got := string(jsonOrText([]byte("{"))); got != `"{"` {
		t.Errorf("jsonOrText(invalid) = %s", got)
	}
	if jsonOrText(nil) != nil {
		t.Error("jsonOrText(nil) != nil")
	}
}

// FuzzSnapshotOpen: whatever change is made to a genuine snapshot, open
// either refuses it or, when it accepts it, the change did not change the
// content: the state decodes to exactly the sealed state.
func FuzzSnapshotOpen(f *testing.F) {
	l, s := suspendedState(f)
	snap, err := l.seal(s)
	if err != nil {
		f.Fatal(err)
	}
	want, _ := json.Marshal(s)
	f.Add(uint16(0), byte('x'), false)
	f.Add(uint16(40), byte(' '), true)
	f.Add(uint16(200), byte('9'), false)
	f.Add(uint16(len(snap)-3), byte('}'), true)
	f.Fuzz(func(t *testing.T, pos uint16, b byte, insert bool) {
		mutated := bytes.Clone(snap)
		i := int(pos) % len(mutated)
		if insert {
			mutated = append(mutated[:i], append([]byte{b}, mutated[i:]...)...)
		} else {
			mutated[i] = b
		}
		got, err := l.open(mutated)
		if err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("open(mutated) = %v; want an error wrapping ErrSnapshot", err)
			}
			return
		}
		if canon, _ := json.Marshal(got); !bytes.Equal(canon, want) {
			t.Fatalf("open accepted a changed content:\n got %s\nwant %s", canon, want)
		}
	})
}

// hostState runs a node with HostApproval to the suspension at its
// deferred write and returns its decoded snapshot state.
func hostState(t testing.TB) (*Loop, *snapState) {
	t.Helper()
	create := &tool.Tool{Name: "create_site", InputSchema: &jsonschema.Schema{Type: "object"}, Effect: tool.Write,
		Func: func(context.Context, tool.Request) (any, error) { return 1, nil }}
	l, err := New(Config{
		Model:    scripted(calls(ToolCall{ID: "w", Name: "create_site", Args: json.RawMessage(`{}`)})),
		Tools:    tool.MustCatalog(create),
		Observer: DiscardObserver,
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Run(context.Background(), Node{Tools: []string{"create_site"}, HostApproval: true}, "hi")
	if err != nil || res.Status != Suspended {
		t.Fatalf("Run = %v, %v; want suspended", res.Status, err)
	}
	s, err := l.open(res.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}

// A suspension at the write call itself is consistent only in a node with
// HostApproval, and only for the wave's current call, as that call's own
// tool.
func TestSnapshotCheckHostApproval(t *testing.T) {
	tests := []struct {
		name string
		edit func(s *snapState)
	}{
		{"node without HostApproval", func(s *snapState) { s.Node.HostApproval = false }},
		{"pending call is another call", func(s *snapState) { s.Suspension.Approval.CallID = "x" }},
		{"pending tool is another tool", func(s *snapState) { s.Suspension.Approval.Tool = "delete_site" }},
		{"suspension without a pending write", func(s *snapState) { s.Suspension.Approval = nil }},
		{"follow-up kind", func(s *snapState) { s.Suspension.Kind = SuspendFollowUp }},
		{"a built-in as the write", func(s *snapState) {
			s.Transcript[1].ToolCalls[0].Name = ToolFinish
			s.Suspension.Approval.Tool = ToolFinish
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, s := hostState(t)
			if err := s.check(); err != nil {
				t.Fatalf("unedited state: %v", err)
			}
			tt.edit(s)
			b := resealed(t, l, s)
			if _, err := l.Resume(context.Background(), b, Approve(l.keys[0].ticket(s))); !errors.Is(err, ErrSnapshotCorrupt) {
				t.Errorf("Resume(%s) = %v; want ErrSnapshotCorrupt", tt.name, err)
			}
		})
	}
}

// A version 2 snapshot (sealed to the second, without owner) still opens,
// as a run of the zero owner sealed at that second; a version 2 state with
// version 3 fields is corrupt.
func TestSnapshotVersion2Opens(t *testing.T) {
	l, s := suspendedState(t)
	v2 := *s
	v2.Sealed, v2.SealedNano = s.sealedAt().Unix(), 0
	seal := func(st *snapState) []byte {
		state, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(envelope{Format: SnapshotFormat, Version: 2, Key: l.keys[0].id, MAC: l.keys[0].mac(2, state), State: state})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	got, err := l.open(seal(&v2))
	if err != nil {
		t.Fatalf("open(version 2) = %v", err)
	}
	if got.sealedAt().Unix() != v2.Sealed || got.Owner != (Owner{}) {
		t.Fatalf("version 2 opened as sealed %v, owner %v; want %d and the zero owner", got.sealedAt(), got.Owner, v2.Sealed)
	}
	bad := v2
	bad.Owner = Owner{Tenant: "acme"}
	if _, err := l.open(seal(&bad)); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("open(version 2 with an owner) = %v; want ErrSnapshotCorrupt", err)
	}
	v3 := *s
	v3.SealedNano = 0
	if _, err := l.open(resealed(t, l, &v3)); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("open(version 3 without a seal time) = %v; want ErrSnapshotCorrupt", err)
	}
}

// A transcript message that refers to a payload the snapshot's evidence
// does not hold is corrupt, even under a valid seal.
func TestSnapshotPayloadRefChecked(t *testing.T) {
	l, s := suspendedState(t)
	for i, m := range s.Transcript {
		if m.Role == RoleTool {
			s.Transcript[i].PayloadOf = "nowhere"
			break
		}
	}
	if _, err := l.open(resealed(t, l, s)); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("open(a dangling payload reference) = %v; want ErrSnapshotCorrupt", err)
	}
}

// Whatever ticket a decision carries, nothing runs unless it is the
// ticket of the suspension the snapshot holds.
func FuzzResumeTicket(f *testing.F) {
	l0, s0 := suspendedState(f)
	good := l0.keys[0].ticket(s0)
	f.Add(good)
	f.Add("")
	f.Add("rgt1.")
	f.Add("rgt1." + s0.ID + ".")
	f.Add("rgt1." + s0.ID + "." + strings.Repeat("A", 22))
	f.Add(strings.Replace(good, "rgt1", "rgt2", 1))
	f.Fuzz(func(t *testing.T, ticket string) {
		l, s := suspendedState(t)
		snap := resealed(t, l, s)
		want := l.keys[0].ticket(s)
		_, err := l.Resume(context.Background(), snap, Answer(ticket, "blog"))
		if ticket == want {
			return // the genuine ticket (of this suspension) may apply
		}
		if !errors.Is(err, ErrTicket) && !errors.Is(err, ErrAlreadyResumed) {
			t.Fatalf("Resume(ticket %q) = %v; want ErrTicket", ticket, err)
		}
	})
}
