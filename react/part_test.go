package react_test

import (
	"context"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

func TestPartKindText(t *testing.T) {
	for k := react.PartKind(0); k <= 4; k++ {
		b, err := k.MarshalText()
		if !k.IsValid() {
			assert.Error(t, err, "%d is not a kind: no name", k)
			assert.Equal(t, "part_kind("+string(rune('0'+k))+")", k.String())
			continue
		}
		require.NoError(t, err)
		var back react.PartKind
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, k, back, "%s round-trips", b)
	}
	k := react.PartCall
	assert.Error(t, k.UnmarshalText([]byte("Text")), "names are matched exactly")
	assert.Equal(t, react.PartCall, k, "a refused name leaves the kind unchanged")
}

// parted is a turn of two texts around a call and an opaque piece, as an
// adapter reports it.
func parted() react.Response {
	r := turn(call("a", "list_sites", `{}`))
	r.Text = "Let me look.And then decide."
	r.Parts = []react.Part{
		{Kind: react.PartOpaque, API: "test", Data: []byte(`{"type":"thinking","signature":"c2ln"}`)},
		{Kind: react.PartText, Text: "Let me look."},
		{Kind: react.PartCall, Call: 0, API: "test", Data: []byte{0xff, 0x00}},
		{Kind: react.PartText, Text: "And then decide."},
	}
	return r
}

// The loop keeps an adapter's parts in the assistant message it sends back,
// through a snapshot too; the model sees them on the next turn.
func TestPartsAreReplayed(t *testing.T) {
	list, _, _ := sitesTools()
	m := newScript(parted(), turn(call("q", react.ToolFollowUp, `{"question":"which site?"}`)), turn(finish("f")))
	e := newEnv(t, m, list.Tool)
	res := e.run(react.Node{Tools: []string{"list_sites"}}, "look")
	require.Equal(t, react.Suspended, res.Status)
	want := parted().Parts
	assert.Equal(t, want, res.Transcript[1].Parts, "the transcript keeps the parts")
	assert.Equal(t, want, m.requests()[1].Messages[2].Parts, "the next request carries them")

	res, err := e.loop.Resume(context.Background(), res.Snapshot, react.Answer(ticketOf(t, e.loop, res.Snapshot), "blog"))
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	reqs := m.requests()
	assert.Equal(t, want, reqs[len(reqs)-1].Messages[2].Parts, "the parts survive the snapshot, opaque bytes included")
}

func TestInconsistentPartsAreDropped(t *testing.T) {
	for _, tt := range []struct {
		name  string
		parts []react.Part
	}{
		{"a call left out", []react.Part{{Kind: react.PartText, Text: "x"}}},
		{"a call twice", []react.Part{{Kind: react.PartCall}, {Kind: react.PartCall}}},
		{"a call out of range", []react.Part{{Kind: react.PartCall}, {Kind: react.PartCall, Call: 1}}},
		{"a negative call", []react.Part{{Kind: react.PartCall}, {Kind: react.PartCall, Call: -1}}},
		{"no kind", []react.Part{{Kind: react.PartCall}, {Text: "x"}}},
		{"too many", append([]react.Part{{Kind: react.PartCall}}, make([]react.Part, react.MaxParts)...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			list, _, _ := sitesTools()
			r := turn(call("a", "list_sites", `{}`))
			r.Parts = tt.parts
			e := newEnv(t, newScript(r, turn(finish("f"))), list.Tool)
			res := e.run(react.Node{Tools: []string{"list_sites"}}, "look")
			require.Equal(t, react.Finished, res.Status)
			assert.Nil(t, res.Transcript[1].Parts, "parts that do not fit the calls are dropped, the turn is kept")
			assert.Equal(t, 1, list.executions())
		})
	}
}

// A turn keeps at most MaxParts parts: at the bound they are kept, one
// more and they are all dropped (the turn itself is kept). The parts
// here are valid but for their number.
func TestPartsBound(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		kept bool
	}{
		{"MaxParts parts are kept", react.MaxParts, true},
		{"MaxParts+1 parts are dropped", react.MaxParts + 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parts := []react.Part{{Kind: react.PartCall}}
			for len(parts) < tt.n {
				parts = append(parts, react.Part{Kind: react.PartText, Text: "x"})
			}
			list, _, _ := sitesTools()
			r := turn(call("a", "list_sites", `{}`))
			r.Parts = parts
			e := newEnv(t, newScript(r, turn(finish("f"))), list.Tool)
			res := e.run(react.Node{Tools: []string{"list_sites"}}, "look")
			require.Equal(t, react.Finished, res.Status)
			if tt.kept {
				assert.Len(t, res.Transcript[1].Parts, tt.n)
			} else {
				assert.Nil(t, res.Transcript[1].Parts)
			}
			assert.Equal(t, 1, list.executions())
		})
	}
}

// The loop keeps a copy of a part's Data: an adapter that reuses its
// buffer for the next turn does not change the turn the loop kept, in the
// transcript or in the next request.
func TestPartDataIsCopied(t *testing.T) {
	buf := []byte("signature-1")
	n := 0
	var second react.Request
	m := reacttest.Func(func(req react.Request) react.Response {
		n++
		if n == 1 {
			r := turn(call("a", "list_sites", `{}`))
			r.Parts = []react.Part{{Kind: react.PartCall, API: "test", Data: buf}}
			return r
		}
		copy(buf, "overwritten")
		second = req
		return turn(finish("f"))
	})
	list, _, _ := sitesTools()
	l, err := react.New(react.Config{Model: m, Tools: tool.MustCatalog(list.Tool), Guards: memoryStores(), Observer: react.DiscardObserver})
	require.NoError(t, err)
	res, err := l.Run(context.Background(), react.Node{Tools: []string{"list_sites"}}, "look")
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, "signature-1", string(res.Transcript[1].Parts[0].Data), "the transcript keeps the bytes the adapter gave")
	assert.Equal(t, "signature-1", string(second.Messages[2].Parts[0].Data), "the next request carries them")
}

func TestPartTextsMadeValid(t *testing.T) {
	r := text("ok")
	r.Parts = []react.Part{{Kind: react.PartText, Text: "a\xffb"}}
	e := newEnv(t, newScript(r, turn(finish("f"))))
	res := e.run(react.Node{}, "hi")
	assert.Equal(t, "a\uFFFDb", res.Transcript[1].Parts[0].Text)
}

// The Assembler keeps the last Parts a stream sent; Collect returns them.
func TestAssemblerParts(t *testing.T) {
	p1 := []react.Part{{Kind: react.PartText, Text: "a"}}
	p2 := []react.Part{{Kind: react.PartText, Text: "a"}, {Kind: react.PartCall}}
	stream := iter.Seq2[react.Chunk, error](func(yield func(react.Chunk, error) bool) {
		_ = yield(react.Chunk{Text: "a", Parts: p1}, nil) &&
			yield(react.Chunk{Call: &react.CallDelta{ID: "c", Name: "n"}, Parts: p2}, nil) &&
			yield(react.Chunk{FinishReason: "stop"}, nil)
	})
	resp, err := react.Collect(stream)
	require.NoError(t, err)
	assert.Equal(t, p2, resp.Parts)
}

// A tool's description reaches EventToolStart: the catalog tool's and the
// built-in's, none for a tool the node does not offer.
func TestToolStartDescription(t *testing.T) {
	list, _, _ := sitesTools()
	e := newEnv(t, newScript(turn(call("a", "list_sites", `{}`), call("b", "nope", `{}`)), turn(finish("f"))), list.Tool)
	var got = map[string]string{}
	e.cfg.Observer = react.ObserverFunc(func(_ context.Context, ev react.Event) {
		if ev.Kind == react.EventToolStart {
			got[ev.ToolStart.Tool] = ev.ToolStart.Description
		}
	})
	l, err := react.New(e.cfg)
	require.NoError(t, err)
	_, err = l.Run(context.Background(), react.Node{Tools: []string{"list_sites"}, NoProgressLimit: 3}, "look")
	require.NoError(t, err)
	assert.Equal(t, "list_sites tool", got["list_sites"])
	assert.Empty(t, got["nope"])
	assert.Equal(t, "End the node when the task is done. Every required output must be set first.", got[react.ToolFinish], "the built-in's description")
}
