package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/threadstore"
)

type fuzzOut struct {
	N     int            `json:"n,omitempty" accepts:"model"`
	U     uint8          `json:"u,omitempty" accepts:"model"`
	F     float64        `json:"f,omitempty" accepts:"model"`
	S     string         `json:"s,omitempty" accepts:"model"`
	B     bool           `json:"b,omitempty" accepts:"model"`
	Ns    []int          `json:"ns,omitempty" accepts:"model"`
	M     map[string]int `json:"m,omitempty" accepts:"model"`
	Inner *struct {
		K int64 `json:"k"`
	} `json:"inner,omitempty" accepts:"model"`
}

// FuzzTypedOutput: whatever value a model sets for a typed output, the
// loop never panics; it refuses a value its type does not admit with
// OUTPUT_VALUE_INVALID, and a value it accepts decodes into the field with
// OutputsAs: the check and the Go type agree.
func FuzzTypedOutput(f *testing.F) {
	for _, c := range []struct{ key, value string }{
		{"n", `3`}, {"n", `1.0`}, {"n", `1e3`}, {"n", `"3"`}, {"n", `99999999999999999999`}, {"u", `256`}, {"u", `-1`},
		{"f", `1e400`}, {"f", `-0.5`}, {"s", `"x\u0000"`}, {"b", `true`}, {"ns", `[1,2.5]`}, {"ns", `[1,2]`}, {"ns", `null`},
		{"m", `{"a":1}`}, {"m", `{"a":1.5}`}, {"inner", `{"k":9007199254740993}`}, {"inner", `{"k":1,"x":2}`}, {"inner", `{}`}, {"s", `{`},
	} {
		f.Add(c.key, c.value)
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		args, err := json.Marshal(map[string]any{"key": key, "value": json.RawMessage(value), "sourceType": "model"})
		if err != nil {
			args = []byte(`{"key":` + jsonQuote(key) + `,"value":` + value + `,"sourceType":"model"}`)
		}
		m := newScript(turn(react.ToolCall{ID: "c1", Name: react.ToolOutputSet, Args: args}), turn(reacttest.Finish("c2", "")))
		e := newEnv(t, m)
		res, err := e.loop.Run(context.Background(), react.Node{Outputs: react.OutputsOf[fuzzOut]()}, "go")
		if err != nil && !errors.Is(err, errScriptDone) {
			t.Fatalf("Run = %v", err)
		}
		if len(res.Calls) == 0 {
			t.Fatal("the output call has no report")
		}
		c := res.Calls[0]
		if c.Outcome != outcome.Success {
			if c.Code == 0 || !c.Code.IsValid() {
				t.Fatalf("refused without a code: %+v", c)
			}
			return
		}
		if _, err := react.OutputsAs[fuzzOut](res); err != nil {
			t.Fatalf("output %q = %s was accepted, but OutputsAs: %v", key, value, err)
		}
	})
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// FuzzThreadTurn: whatever bytes a thread store returns as a turn, a
// message to the thread and a read of it never panic: a turn that does not
// open is ErrThreadCorrupt.
func FuzzThreadTurn(f *testing.F) {
	f.Add([]byte(`{}`), 1)
	f.Add([]byte(`{"format":"reactguard.react.turn","version":1,"key":"","mac":"","state":{}}`), 1)
	f.Add([]byte(`not json`), 2)
	f.Fuzz(func(t *testing.T, content []byte, index int) {
		d := newDesk(t)
		l := d.loop(reacttest.Func(clerk))
		d.message(l, "t1", "My order is A-17.")
		d.threads = &tamper{Store: d.threads, turns: func(ts []threadstore.Turn) []threadstore.Turn {
			for i := range ts {
				ts[i].Content, ts[i].Index = content, index
			}
			return ts
		}}
		l = d.loop(reacttest.Func(clerk))
		if _, err := l.Turns(bg, "t1", 1, 10, asAlice); !errors.Is(err, react.ErrThreadCorrupt) {
			t.Fatalf("Turns of a forged turn = %v; want ErrThreadCorrupt", err)
		}
		if _, err := l.Run(bg, deskNode, "Hello.", react.InThread("t1"), asAlice); !errors.Is(err, react.ErrThreadCorrupt) {
			t.Fatalf("a message after a forged turn = %v; want ErrThreadCorrupt", err)
		}
	})
}
