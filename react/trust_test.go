package react_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// The tests of this file attack the loop as a hostile host, a
// double-clicking user and a careless store would (issue "suspension and
// resume that cannot be forged, doubled or lost").

// editState decodes a snapshot into a Go map, lets f edit its state, and
// encodes it again, keeping the envelope (and so the old seal).
func editState(t *testing.T, snap []byte, f func(state map[string]any)) []byte {
	t.Helper()
	var env map[string]any
	require.NoError(t, json.Unmarshal(snap, &env))
	f(env["state"].(map[string]any))
	b, err := json.Marshal(env)
	require.NoError(t, err)
	return b
}

// forgeMAC reseals a snapshot's state under key, with the key id id, the
// way an attacker who knows the format (but not the loop's key) would.
func forgeMAC(t *testing.T, snap []byte, id string, key []byte) []byte {
	t.Helper()
	var env map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(snap, &env))
	var state bytes.Buffer
	require.NoError(t, json.Compact(&state, env["state"]))
	h := hmac.New(sha256.New, key)
	_, _ = fmt.Fprintf(h, "%s\x00%d\x00%s\x00", react.SnapshotFormat, react.SnapshotVersion, id)
	h.Write(state.Bytes())
	env["key"], _ = json.Marshal(id)
	env["mac"], _ = json.Marshal("hmac-sha256:" + hex.EncodeToString(h.Sum(nil)))
	b, err := json.Marshal(env)
	require.NoError(t, err)
	return b
}

func keyID(t *testing.T, snap []byte) string {
	t.Helper()
	var env struct{ Key string }
	require.NoError(t, json.Unmarshal(snap, &env))
	return env.Key
}

func TestTrust_ForgedSnapshotsAreRefused(t *testing.T) {
	list, _, create := sitesTools()
	drop := newFake("drop_sites", tool.Write, ok("dropped"))
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool, drop.Tool)
	res := e.run(approvalNode, "create a site called blog")
	require.Equal(t, react.Suspended, res.Status)
	snap := res.Snapshot
	stolen := bytes.Repeat([]byte{7}, 32)

	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"pending call's arguments", editState(t, snap, func(s map[string]any) {
			s["suspension"].(map[string]any)["approval"].(map[string]any)["args"] = `{"name":"evil"}`
			for _, m := range s["transcript"].([]any) {
				for _, c := range asList(m.(map[string]any)["tool_calls"]) {
					if c.(map[string]any)["name"] == "create_site" {
						c.(map[string]any)["args"] = `{"name":"evil"}`
					}
				}
			}
		}), react.ErrSnapshotSeal},
		{"node's tool list", editState(t, snap, func(s map[string]any) {
			n := s["node"].(map[string]any)
			n["tools"] = append(n["tools"].([]any), "drop_sites")
		}), react.ErrSnapshotSeal},
		{"run id", editState(t, snap, func(s map[string]any) { s["run"] = "someone-elses-run" }), react.ErrSnapshotSeal},
		{"an unanswered call added to the turn", editState(t, snap, func(s map[string]any) {
			msgs := s["transcript"].([]any)
			last := msgs[len(msgs)-1].(map[string]any)
			last["tool_calls"] = append(asList(last["tool_calls"]), map[string]any{"id": "evil", "name": "drop_sites", "args": "{}"})
		}), react.ErrSnapshotSeal},
		{"evidence the tools never returned", editState(t, snap, func(s map[string]any) {
			ev := s["evidence"].(map[string]any)
			ev["records"] = append(asList(ev["records"]), map[string]any{"call_id": "l", "tool": "list_sites", "outcome": "SUCCESS", "payload": `{"id":"invented"}`, "attempt": 9, "round": 1})
		}), react.ErrSnapshotSeal},
		{"resealed under a guessed key with the loop's key id", forgeMAC(t, editState(t, snap, func(s map[string]any) { s["stalls"] = 0 }), keyID(t, snap), stolen), react.ErrSnapshotSeal},
		{"resealed under the attacker's own key", forgeMAC(t, snap, "0011223344556677", stolen), react.ErrSnapshotKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.again(approvalAfter()).Resume(context.Background(), tt.in, react.Approve(res.Suspension.Ticket))
			require.ErrorIs(t, err, tt.want)
			require.ErrorIs(t, err, react.ErrSnapshot)
		})
	}
	assert.Equal(t, 0, create.executions()+drop.executions()+list.executions()-1, "nothing but the original list call ran")
	gated, ok, err := e.guards.Approvals.Gated(context.Background(), "run-1")
	require.NoError(t, err)
	assert.True(t, ok && gated.CallID == "w1", "the genuine call still waits for approval: %+v", gated)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func TestTrust_KeysRotateAndStayInTheirProcess(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 48)
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	withKeys := func(m react.Model, keys ...[]byte) *react.Loop {
		cfg := e.cfg
		cfg.Model, cfg.SnapshotKeys = m, keys
		l, err := react.New(cfg)
		require.NoError(t, err)
		return l
	}
	res, err := withKeys(approvalBefore(), oldKey).Run(context.Background(), approvalNode, "create a site called blog")
	require.NoError(t, err)

	_, err = e.loop.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.ErrorIs(t, err, react.ErrSnapshotKey, "a loop on the process key cannot open a snapshot sealed under a configured key")
	_, err = withKeys(approvalAfter(), newKey).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.ErrorIs(t, err, react.ErrSnapshotKey, "a retired key no longer opens")

	// Rotation: the new key seals, the old one still opens.
	m := newScript(turn(call("w2", "create_site", `{"name":"blog"}`)), turn(call("q", react.ToolFollowUp, `{"question":"Which colour should the header have?"}`)))
	rotated := withKeys(m, newKey, oldKey)
	got, err := rotated.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Suspended, got.Status)
	assert.NotEqual(t, keyID(t, res.Snapshot), keyID(t, got.Snapshot), "the new snapshot is sealed under the first key")
	_, err = withKeys(approvalAfter(), oldKey).Resume(context.Background(), got.Snapshot, react.Answer(got.Suspension.Ticket, "red"))
	require.ErrorIs(t, err, react.ErrSnapshotKey)
	done := newScript(turn(call("s", react.ToolOutputSet, `{"key":"site_id","value":42,"sourceType":"tool_result","sourceRef":"w2"}`)), turn(finish("f")))
	got, err = withKeys(done, newKey).Resume(context.Background(), got.Snapshot, react.Answer(got.Suspension.Ticket, "red"))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)

	// The process key: any loop of this process opens its snapshots.
	list2, _, create2 := sitesTools()
	e2 := newEnv(t, approvalBefore(), list2.Tool, create2.Tool)
	res = e2.run(approvalNode, "create a site called blog")
	got, err = e2.again(approvalAfter()).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	assert.Equal(t, react.Finished, got.Status)
}

func TestTrust_KeysAreValidated(t *testing.T) {
	k := bytes.Repeat([]byte{1}, 32)
	tests := []struct {
		name string
		keys [][]byte
		want string
	}{
		{"short key", [][]byte{k[:31]}, "SnapshotKeys[0] has 31 bytes"},
		{"empty second key", [][]byte{k, nil}, "SnapshotKeys[1] has 0 bytes"},
		{"repeated key", [][]byte{k, bytes.Clone(k)}, "SnapshotKeys[1] repeats"},
	}
	for _, tt := range tests {
		_, err := react.New(react.Config{Model: newScript(), SnapshotKeys: tt.keys})
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
	key := bytes.Repeat([]byte{3}, 32)
	cfg := react.Config{Model: newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which?"}`))), SnapshotKeys: [][]byte{key}, Observer: react.DiscardObserver}
	l, err := react.New(cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{}, "hi")
	require.NoError(t, err)
	key[0] = 9 // the caller reuses its slice
	_, err = l.Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "x"))
	assert.NotErrorIs(t, err, react.ErrSnapshot, "New copied the key")
}

// reencodings are what stores and hosts do to a JSON document without
// changing its content.
var reencodings = []struct {
	name string
	f    func(t *testing.T, b []byte) []byte
}{
	{"indented", func(t *testing.T, b []byte) []byte {
		var out bytes.Buffer
		require.NoError(t, json.Indent(&out, b, "", "\t"))
		return out.Bytes()
	}},
	{"Go map round trip (keys sorted, HTML escaped)", func(t *testing.T, b []byte) []byte {
		var v any
		require.NoError(t, json.Unmarshal(b, &v))
		out, err := json.Marshal(v)
		require.NoError(t, err)
		return out
	}},
	{"no HTML escaping", func(t *testing.T, b []byte) []byte {
		var v any
		require.NoError(t, json.Unmarshal(b, &v))
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(v))
		return out.Bytes()
	}},
	{"keys reversed", reverseKeys},
	{"non-ASCII escaped", func(t *testing.T, b []byte) []byte { return escapeNonASCII(b) }},
}

// reverseKeys re-encodes b with every object's keys in reverse order.
func reverseKeys(t *testing.T, b []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	var out bytes.Buffer
	var write func(v any)
	write = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			for i, j := 0, len(keys)-1; i < j; i, j = i+1, j-1 {
				keys[i], keys[j] = keys[j], keys[i]
			}
			out.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					out.WriteByte(',')
				}
				kb, _ := json.Marshal(k)
				out.Write(kb)
				out.WriteByte(':')
				write(v[k])
			}
			out.WriteByte('}')
		case []any:
			out.WriteByte('[')
			for i, e := range v {
				if i > 0 {
					out.WriteByte(',')
				}
				write(e)
			}
			out.WriteByte(']')
		default:
			eb, _ := json.Marshal(v)
			out.Write(eb)
		}
	}
	write(v)
	return out.Bytes()
}

// escapeNonASCII writes every non-ASCII character of b's strings as \uXXXX
// (surrogate pairs above the BMP).
func escapeNonASCII(b []byte) []byte {
	var out bytes.Buffer
	for _, r := range string(b) {
		switch {
		case r < utf8.RuneSelf:
			out.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&out, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&out, `\u%04x`, r)
		}
	}
	return out.Bytes()
}

func TestTrust_ReencodedSnapshotsResume(t *testing.T) {
	for _, re := range reencodings {
		t.Run(re.name, func(t *testing.T) {
			list, _, create := sitesTools()
			e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
			res := e.run(approvalNode, "create a site called blog <b>&</b> — 博客 🚀")
			got, err := e.again(approvalAfter()).Resume(context.Background(), re.f(t, res.Snapshot), react.Approve(res.Suspension.Ticket))
			require.NoError(t, err)
			assert.Equal(t, react.Finished, got.Status)
			assert.Equal(t, 1, create.executions())
			assert.Equal(t, "create a site called blog <b>&</b> — 博客 🚀", got.Transcript[0].Content)
		})
	}
}

// Invalid UTF-8 from the user or the model must not make a snapshot
// unresumable: text is made valid where it enters the run, and the
// snapshot holds exactly what the run holds.
func TestTrust_InvalidUTF8Resumes(t *testing.T) {
	bad := "blog\xff\xfe name \xc3"
	m := newScript(
		turn(call("l\xff", "list_sites", `{"q":"`+bad+`"}`)),
		turn(call("w1", "create_site", `{"name":"blog"}`)),
		turn(call("a", react.ToolApproval, `{"tool":"create_site","reason":"`+bad+`"}`)),
	)
	list, _, create := sitesTools()
	e := newEnv(t, m, list.Tool, create.Tool)
	res := e.run(approvalNode, "create "+bad)
	require.Equal(t, react.Suspended, res.Status)
	for _, msg := range res.Transcript {
		require.True(t, utf8.ValidString(msg.Content), "message %q", msg.Content)
		for _, c := range msg.ToolCalls {
			require.True(t, utf8.ValidString(c.ID) && utf8.Valid(c.Args), "call %q %q", c.ID, c.Args)
		}
	}
	for _, re := range reencodings[:2] {
		list2, _, create2 := sitesTools()
		e2 := newEnv(t, newScript(m.turns[0], m.turns[1], m.turns[2]), list2.Tool, create2.Tool)
		res2 := e2.run(approvalNode, "create "+bad)
		got, err := e2.again(approvalAfter()).Resume(context.Background(), re.f(t, res2.Snapshot), react.Approve(res2.Suspension.Ticket))
		require.NoError(t, err, re.name)
		assert.Equal(t, react.Finished, got.Status, re.name)
		assert.Equal(t, res2.Transcript[0].Content, got.Transcript[0].Content, "the resumed run holds the text the run held")
	}
}

func TestTrust_ExpiredSnapshot(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	list, _, create := sitesTools()
	e := newEnv(t, approvalBefore(), list.Tool, create.Tool)
	cfg := e.cfg
	cfg.SnapshotMaxAge = 24 * time.Hour
	cfg.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	l, err := react.New(cfg)
	require.NoError(t, err)
	res, err := l.Run(context.Background(), approvalNode, "create a site called blog")
	require.NoError(t, err)
	mu.Lock()
	now = now.Add(25 * time.Hour)
	mu.Unlock()
	_, err = l.Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.ErrorIs(t, err, react.ErrSnapshotExpired)
	require.ErrorIs(t, err, react.ErrSnapshot)
	assert.Equal(t, 0, create.executions())
}

// statelessSiteModel answers from the transcript alone, so one value serves
// any number of runs at once: list the spaces, create the site in the
// listed space, ask for approval when deferred, create it again once
// approved, and finish after it was created.
func statelessSiteModel() react.Model {
	return react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) {
		msgs := req.Messages
		last := msgs[len(msgs)-1]
		n := len(msgs)
		id := func(s string) string { return fmt.Sprintf("%s%d", s, n) }
		switch {
		case last.Role == react.RoleUser:
			return turn(call(id("l"), "list_spaces", `{}`)), nil
		case last.ToolName == "list_spaces", last.ToolName == react.ToolApproval:
			return turn(call(id("w"), "create_site", `{"name":"blog","space_id":"sp-42"}`)), nil
		case last.ToolName == "create_site" && last.IsError: // deferred for approval
			return turn(call(id("a"), react.ToolApproval, `{"tool":"create_site"}`)), nil
		case last.ToolName == "create_site":
			return turn(finish(id("f"))), nil
		}
		return turn(call(id("x"), react.ToolFail, `{"reason":"unexpected"}`)), nil
	})
}

// Two resumes of one snapshot that overlap: exactly one goes on; the other
// is refused before it touches anything (no evidence import, no forget),
// so the approved write runs once per run and no verdict is false. This is
// the attack that, before claims, lost an approved write and produced
// false PARAM_PROVENANCE_QUERY_FIRST rejections.
func TestTrust_ConcurrentDoubleResume(t *testing.T) {
	const runs = 500
	spaces := newFake("list_spaces", tool.Read, ok([]any{map[string]any{"id": "sp-42"}}))
	var mu sync.Mutex
	executed := map[string]int{}
	create := newFake("create_site", tool.Write, func(_ context.Context, req tool.Request) (any, error) {
		mu.Lock()
		executed[req.IdempotencyKey]++ // one key per run: the same write in every run
		mu.Unlock()
		return map[string]any{"site_id": "site-1"}, nil
	})
	create.InputSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"space_id": {Type: "string"}}}
	create.Params = map[string]tool.Source{"space_id": tool.Result("list_spaces", "id")}
	cat, err := tool.NewCatalog(spaces.Tool, create.Tool)
	require.NoError(t, err)
	var bad atomic.Int32
	verdicts := &verdictCheck{bad: &bad}
	cfg := react.Config{Model: statelessSiteModel(), Tools: cat, Guards: memoryStores(), Observer: verdicts, Claims: runstore.NewMemoryClaims()}
	loop, err := react.New(cfg)
	require.NoError(t, err)
	node := react.Node{Name: "create", Tools: []string{"list_spaces", "create_site"}}

	snaps := make([][]byte, runs)
	for i := range snaps {
		res, err := loop.Run(context.Background(), node, "create a blog")
		require.NoError(t, err)
		require.Equal(t, react.Suspended, res.Status)
		snaps[i] = res.Snapshot
	}
	var finished, refused atomic.Int32
	var wg sync.WaitGroup
	for _, snap := range snaps {
		for range 2 {
			wg.Go(func() {
				res, err := loop.Resume(context.Background(), snap, react.Approve(ticketOf(t, loop, snap)))
				switch {
				case err == nil && res.Status == react.Finished:
					finished.Add(1)
				case errors.Is(err, react.ErrAlreadyResumed):
					refused.Add(1)
				default:
					t.Errorf("Resume = %v, %v; want finished or ErrAlreadyResumed", res.Status, err)
				}
			})
		}
	}
	wg.Wait()
	assert.EqualValues(t, runs, finished.Load(), "one resume of each snapshot goes on")
	assert.EqualValues(t, runs, refused.Load(), "the other is refused")
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, executed, runs, "every run's approved write executed")
	for run, n := range executed {
		if n != 1 {
			t.Errorf("run %s executed its write %d times; want 1", run, n)
		}
	}
	assert.Zero(t, bad.Load(), "false verdicts")
}

// verdictCheck counts verdicts that cannot be right in the stateless
// site story: any catalog call that is not a SUCCESS, except the first
// deferral of the write.
type verdictCheck struct {
	bad *atomic.Int32
}

func (v *verdictCheck) OnToolInvoked(_ context.Context, e react.ToolEvent) {
	if e.Builtin || e.Outcome.String() == "SUCCESS" || e.Code == errcode.ApprovalRequired {
		return
	}
	v.bad.Add(1)
}

// The payment story of seed 003: an approved payment declined definitively
// by the bank is not retried by presenting the same approval again.
func TestTrust_ReplayAfterDefinitiveFailure(t *testing.T) {
	list, _, _ := sitesTools()
	pay := newFake("create_site", tool.Write, fails(tool.BusinessFailure("bank.51", "insufficient funds")))
	e := newEnv(t, approvalBefore(), list.Tool, pay.Tool)
	res := e.run(approvalNode, "create a site called blog")
	after := newScript(turn(call("w2", "create_site", `{"name":"blog"}`)), turn(call("x", react.ToolFail, `{"reason":"declined"}`)))
	got, err := e.again(after).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
	require.NoError(t, err)
	require.Equal(t, react.Failed, got.Status)
	assert.Equal(t, 1, pay.executions())

	for range 3 {
		again := newScript(turn(call("w3", "create_site", `{"name":"blog"}`)), turn(call("y", react.ToolFail, `{}`)))
		_, err = e.again(again).Resume(context.Background(), res.Snapshot, react.Approve(res.Suspension.Ticket))
		require.ErrorIs(t, err, react.ErrAlreadyResumed)
	}
	assert.Equal(t, 1, pay.executions(), "a declined payment needs a new decision to run again")
}

// New reads Config.Guards and never writes into it, so Loops may be built
// concurrently around one Options (run with -race).
func TestTrust_NewNeverWritesOptions(t *testing.T) {
	opts := &guard.Options{FingerprintLimit: 2}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			_, err := react.New(react.Config{Model: newScript(), Guards: opts})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, guard.Options{FingerprintLimit: 2}, *opts, "Config.Guards is unchanged")
}

// A panic in host code (here a custom handler, as an interceptor or a
// policy would) reaches Run's caller with the same value whether the reads
// of a turn run one after the other or in parallel.
func TestTrust_HostPanicsAreTheSameWithParallelReads(t *testing.T) {
	type boom struct{ tool string }
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", parallel), func(t *testing.T) {
			list, _, _ := sitesTools()
			stats := newFake("get_stats", tool.Read, ok(1))
			m := newScript(turn(call("a", "list_sites", `{}`), call("b", "get_stats", `{}`), call("c", "list_sites", `{"p":2}`)))
			cat, err := tool.NewCatalog(list.Tool, stats.Tool)
			require.NoError(t, err)
			inner := invoker.New(nil)
			l, err := react.New(react.Config{Model: m, Tools: cat, Observer: react.DiscardObserver,
				Handler: func(ctx context.Context, call invoker.Call) (observation.Observation, error) {
					if call.Name == "get_stats" {
						panic(boom{call.Name})
					}
					return inner(ctx, call)
				}})
			require.NoError(t, err)
			node := react.Node{Tools: []string{"list_sites", "get_stats"}, ParallelReads: parallel}
			var got any
			func() {
				defer func() { got = recover() }()
				_, _ = l.Run(context.Background(), node, "stats")
			}()
			assert.Equal(t, boom{"get_stats"}, got, "the host's panic value reaches Run's caller")
		})
	}
}

// Observe implements react.Observer through dispatch.
func (x *verdictCheck) Observe(ctx context.Context, e react.Event) context.Context {
	return dispatch(ctx, e, x)
}
