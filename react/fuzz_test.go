package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// FuzzModelResponse: malformed tool calls (missing or repeated ids, empty
// or unknown names, arguments that are not JSON) never panic, every call
// is answered exactly once, and every non-success says what to do next.
func FuzzModelResponse(f *testing.F) {
	f.Add("a", "list_sites", `{}`, "b", react.ToolFinish, `{}`)
	f.Add("", "list_sites", `{`, "", "", `null`)
	f.Add("x", "create_site", `{"name":1}`, "x", react.ToolApproval, `{"tool":"create_site"}`)
	f.Add("q", react.ToolFollowUp, `{"question":"which space?"}`, "r", react.ToolFail, `[]`)
	f.Add("s", react.ToolOutputSet, `{"key":"k","value":{"a":[1]},"sourceType":"tool_result","sourceRef":"a"}`, "t", "drop_db", "\x00")
	f.Add("rg_1_2", "list_sites", `"str"`, "", react.ToolOutputSet, `{"key":"k","value":"hi","sourceType":"user"}`)
	f.Fuzz(func(t *testing.T, id1, name1, args1, id2, name2, args2 string) {
		list := newFake("list_sites", tool.Read, ok(map[string]any{"k": "hi"}))
		create := newFake("create_site", tool.Write, ok(map[string]any{"id": 1}))
		m := newScript(turn(
			react.ToolCall{ID: id1, Name: name1, Args: json.RawMessage(args1)},
			react.ToolCall{ID: id2, Name: name2, Args: json.RawMessage(args2)},
		), turn(call("zz_end", react.ToolFail, `{}`)))
		e := newEnv(t, m, list.Tool, create.Tool)
		node := react.Node{Tools: []string{"list_sites", "create_site"}, Outputs: []react.Output{{Key: "k"}}}
		res, err := e.loop.Run(context.Background(), node, "hi")
		if err != nil {
			if !errors.Is(err, errScriptDone) {
				t.Fatalf("Run = %v; want no error (or the end of the script)", err)
			}
			return
		}
		if !res.Status.IsValid() {
			t.Fatalf("Run status %v", res.Status)
		}
		if res.Status != react.Suspended {
			requirePaired(t, res.Transcript)
		}
		for _, msg := range toolMessages(res.Transcript) {
			if msg.IsError && !strings.Contains(msg.Content, ". Next: ") {
				t.Fatalf("non-success without a next step: %q", msg.Content)
			}
		}
		if res.Status == react.Suspended {
			if _, err := e.loop.Resume(context.Background(), res.Snapshot, react.Continue()); !errors.Is(err, react.ErrDecision) {
				t.Fatalf("Resume(suspended, Continue) = %v; want ErrDecision", err)
			}
		}
	})
}

// FuzzSnapshotDecode: whatever bytes are offered as a snapshot, Resume
// never panics, and refuses what it cannot resume with a classified error.
func FuzzSnapshotDecode(f *testing.F) {
	seed := func(m *script, node react.Node, tools ...*tool.Tool) []byte {
		res, err := newEnv(f, m, tools...).loop.Run(context.Background(), node, "create a site called blog")
		if res.Snapshot == nil {
			f.Fatalf("no snapshot (err %v)", err)
		}
		return res.Snapshot
	}
	list, _, create := sitesTools()
	f.Add(seed(approvalBefore(), approvalNode, list.Tool, create.Tool), uint8(0))
	f.Add(seed(newScript(turn(call("q", react.ToolFollowUp, `{"question":"Which?"}`))), react.Node{}), uint8(2))
	f.Add(seed(newScript(turn(call("", "list_sites", `{`)), errors.New("model down")), approvalNode, list.Tool, create.Tool), uint8(3))
	f.Add([]byte(`{"format":"reactguard.react.snapshot","version":1,"checksum":"","state":{}}`), uint8(1))
	f.Add([]byte(`{"format":"reactguard.react.snapshot","version":2,"key":"","mac":"","state":{}}`), uint8(1))
	f.Add([]byte(`{}`), uint8(0))
	f.Add(threadSnapshot(f), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		list, _, create := sitesTools()
		e := newEnv(t, newScript(turn(call("zz_end", react.ToolFail, `{}`))), list.Tool, create.Tool)
		tk := ticketOf(t, e.loop, b)
		d := []react.Decision{react.Approve(tk), react.Decline(tk, "no"), react.Answer(tk, "blue"), react.Continue()}[which%4]
		res, err := e.loop.Resume(context.Background(), b, d)
		if err != nil {
			if !errors.Is(err, react.ErrSnapshot) && !errors.Is(err, react.ErrDecision) && !errors.Is(err, react.ErrInvalidNode) && !errors.Is(err, react.ErrTicket) &&
				!errors.Is(err, guard.ErrNotPending) && !errors.Is(err, react.ErrAlreadyResumed) && !errors.Is(err, errScriptDone) &&
				!errors.Is(err, react.ErrNoThreadStore) {
				t.Fatalf("Resume = %v; want a classified refusal", err)
			}
			return
		}
		if !res.Status.IsValid() {
			t.Fatalf("Resume status %v", res.Status)
		}
	})
}

// FuzzSnapshotTransform: a snapshot of a run whose user words, call ids
// and arguments are arbitrary (invalid UTF-8 included) survives every
// content-preserving re-encoding a store or a host may apply (indentation,
// a Go map round trip, reordered keys, escaped non-ASCII, no HTML
// escaping, in any combination): Resume never refuses it as a snapshot.
func FuzzSnapshotTransform(f *testing.F) {
	f.Add("create a site called blog", "l", `{}`, "the user asked", uint8(0))
	f.Add("blog\xff\xfe", "l\xc3", `{"q":"\xff"}`, "<b>&</b>", uint8(31))
	f.Add("博客 🚀 \u2028", "", `{"q":"\u0000"}`, "", uint8(6))
	f.Add("x", "w1", `not json`, "\"quoted\"", uint8(9))
	f.Fuzz(func(t *testing.T, user, id, args, reason string, transform uint8) {
		reasonJSON, _ := json.Marshal(reason)
		before := newScript(
			turn(react.ToolCall{ID: id, Name: "list_sites", Args: json.RawMessage(args)}),
			turn(call("w1", "create_site", `{"name":"blog"}`)),
			turn(call("a", react.ToolApproval, `{"tool":"create_site","reason":`+string(reasonJSON)+`}`)),
		)
		list, _, create := sitesTools()
		e := newEnv(t, before, list.Tool, create.Tool)
		res, err := e.loop.Run(context.Background(), approvalNode, user)
		if err != nil || res.Status != react.Suspended {
			return // the fuzzed call made the run go elsewhere
		}
		snap := res.Snapshot
		for i, re := range reencodings {
			if transform&(1<<i) != 0 {
				snap = re.f(t, snap)
			}
		}
		_, err = e.again(newScript(turn(call("zz", react.ToolFail, `{}`)))).Resume(context.Background(), snap, react.Approve(ticketOf(t, e.loop, snap)))
		if errors.Is(err, react.ErrSnapshot) {
			t.Fatalf("Resume(re-encoded snapshot, transforms %05b) = %v; want it resumed", transform, err)
		}
	})
}

// threadSnapshot returns the snapshot of a run suspended in a thread,
// sealed under the process key as the fuzzed loops' are.
func threadSnapshot(f *testing.F) []byte {
	d := newDesk(f)
	l, err := react.New(react.Config{Model: reacttest.Func(clerk), Tools: d.tools, Guards: d.guards, Threads: d.threads, Observer: react.DiscardObserver})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := l.Run(context.Background(), deskNode, "My order is A-17.", react.InThread("t1")); err != nil {
		f.Fatal(err)
	}
	res, err := l.Run(context.Background(), deskNode, "Refund it.", react.InThread("t1"))
	if err != nil || res.Snapshot == nil {
		f.Fatalf("no snapshot (%v)", err)
	}
	return res.Snapshot
}
