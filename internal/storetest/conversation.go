package storetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// RoleConversation is the role of a long-lived child that answers the
// messages of conversations (react.InThread) as a chat service does, one
// command a line on its stdin, one answer a line on its stdout. A role
// that starts with it ("conversation-a") is the same role under another
// name (a PostgreSQL store tags its sessions with it).
//
// Commands, fields separated by tabs:
//
//	message <thread> <text>  answer the message; prints the result
//	hold <thread> <text>     start answering it with a model that waits: prints "held"
//	release                  let the held message go on; prints its result
//	approve <run> [ticket]   approve what the stopped run waits for (ResumeRun), the
//	                         suspension the ticket names or, without one, the one
//	                         Pending shows; prints the result
//	decline <run> [ticket]   decline it; prints the result
//	turns <thread>           prints the turns: "<index>:<user>|…"
//
// A result is "<status> turn=<n> run=<id> calls=<tool>:<OUTCOME>:<CODE>,…"
// followed by " waits=approval:<tool> ticket=<ticket>" when the run
// suspended; "busy
// waiting=<bool> run=<id>" for a thread held by another run;
// "already-resumed" for a decision delivered twice; "error <text>"
// otherwise.
const RoleConversation = "conversation"

// Owner is the owner of the conversations.
var convOwner = react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})

var orderID = regexp.MustCompile(`[A-Z]-\d+`)

// desk is the conversation's node: a refund (a write the host approves)
// and an order lookup, both taking the order id from the user's words; a
// reply in text ends a message.
var desk = react.Node{Name: "desk", Tools: []string{"refund", "order_status"}, HostApproval: true, TextAnswers: true, MaxRounds: 12}

// deskCatalog returns the refund and order_status tools; refund appends
// its executions to dir/refunds.log.
func deskCatalog(dir string) (*tool.Catalog, error) {
	in := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"order_id": {Type: "string"}}, Required: []string{"order_id"}}
	refund := &tool.Tool{Name: "refund", Description: "Refund an order.", InputSchema: in, Effect: tool.Write,
		Params: map[string]tool.Source{"order_id": tool.User()},
		Func: func(_ context.Context, req tool.Request) (any, error) {
			if _, err := (backend{path: filepath.Join(dir, "refunds.log")}).apply(req.IdempotencyKey); err != nil {
				return nil, err
			}
			return map[string]any{"refunded": orderID.FindString(string(req.Args))}, nil
		}}
	status := &tool.Tool{Name: "order_status", Description: "Look up an order.", InputSchema: in, Effect: tool.Read,
		Params: map[string]tool.Source{"order_id": tool.User()},
		Func: func(_ context.Context, req tool.Request) (any, error) {
			return map[string]any{"order": orderID.FindString(string(req.Args)), "status": "shipped"}, nil
		}}
	return tool.NewCatalog(refund, status)
}

// Refunds returns how many refunds ran, across processes.
func Refunds(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "refunds.log"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return strings.Count(string(b), "\n"), err
}

// clerk is the conversation's model: it notes an order id, refunds the
// order it finds in the conversation, and, asked where the order is,
// looks up order A-17, then an order id it invents, then refunds A-17
// again (a model that repeats an approved write).
func clerk(req react.Request) react.Response {
	cur, own := "", []react.Message(nil)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == react.RoleUser && !strings.HasPrefix(m.Content, "[") && !strings.Contains(m.Content, "no tool call") {
			cur, own = m.Content, req.Messages[i+1:]
			break
		}
	}
	next := func(calls ...react.ToolCall) (react.ToolCall, bool) {
		for _, c := range calls {
			if _, ok := reacttest.ToolMessage(react.Request{Messages: own}, c.ID); !ok {
				return c, true
			}
		}
		return react.ToolCall{}, false
	}
	switch {
	case strings.Contains(cur, "order is"):
		return reacttest.Text("Noted.")
	case strings.HasPrefix(cur, "Refund"):
		id := ""
		for _, m := range req.Messages[1:] {
			if id = orderID.FindString(m.Content); id != "" {
				break
			}
		}
		if c, ok := next(reacttest.Call("c1", "refund", `{"order_id":"`+id+`"}`)); ok {
			return reacttest.Calls(c)
		}
		return reacttest.Text("Refunded.")
	case strings.HasPrefix(cur, "Where"):
		if c, ok := next(reacttest.Call("c1", "order_status", `{"order_id":"A-17"}`),
			reacttest.Call("c2", "order_status", `{"order_id":"B-99"}`),
			reacttest.Call("c3", "refund", `{"order_id":"A-17"}`)); ok {
			return reacttest.Calls(c)
		}
		return reacttest.Text("It has shipped.")
	}
	return reacttest.Text("Hello.")
}

// conversation runs the commands of in against the stores.
func conversation(ctx context.Context, stores Stores, in io.Reader, out io.Writer) error {
	tools, err := deskCatalog(os.Getenv(EnvDir))
	if err != nil {
		return err
	}
	var (
		mu      sync.Mutex
		holding chan struct{} // closed when the held message may go on
		entered chan struct{} // closed when the held message reached the model
		result  chan string
	)
	model := react.ModelFunc(func(ctx context.Context, req react.Request) (react.Response, error) {
		mu.Lock()
		h, e := holding, entered
		mu.Unlock()
		if h != nil {
			select {
			case <-e:
			default:
				close(e)
			}
			select {
			case <-h:
			case <-ctx.Done():
				return react.Response{}, ctx.Err()
			}
		}
		return clerk(req), nil
	})
	loop, err := react.New(react.Config{
		Model: model, Tools: tools, Observer: react.DiscardObserver,
		Guards:  &guard.Options{Ledger: stores.Ledger, Approvals: stores.Approvals, WriteLedger: stores.WriteLedger},
		Claims:  stores.Claims,
		Runs:    stores.Runs,
		Audit:   stores.Audit,
		Threads: stores.Threads,
		// Every process seals and opens the threads' history with the
		// same keys, as it does the snapshots.
		SnapshotKeys: [][]byte{key},
	})
	if err != nil {
		return err
	}
	say := func(s string) { _, _ = fmt.Fprintln(out, s) }
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		switch {
		case f[0] == "message" && len(f) == 3:
			res, err := loop.Run(ctx, desk, f[2], react.InThread(f[1]), convOwner)
			say(resultLine(res, err))
		case f[0] == "hold" && len(f) == 3:
			mu.Lock()
			holding, entered, result = make(chan struct{}), make(chan struct{}), make(chan string, 1)
			e, r := entered, result
			mu.Unlock()
			go func() {
				res, err := loop.Run(ctx, desk, f[2], react.InThread(f[1]), convOwner)
				r <- resultLine(res, err)
			}()
			select {
			case <-e:
				say("held")
			case line := <-r:
				say(line)
			}
		case f[0] == "release":
			mu.Lock()
			close(holding)
			holding = nil
			r := result
			mu.Unlock()
			say(<-r)
		case (f[0] == "approve" || f[0] == "decline") && (len(f) == 2 || len(f) == 3):
			var ticket string
			if len(f) == 3 {
				ticket = f[2] // the ticket the person was shown
			} else {
				p, err := loop.Pending(ctx, f[1], convOwner)
				if err != nil {
					say(resultLine(react.Result{}, err))
					continue
				}
				ticket = p.Suspension.Ticket
			}
			d := react.Approve(ticket)
			if f[0] == "decline" {
				d = react.Decline(ticket, "already refunded")
			}
			res, err := loop.ResumeRun(ctx, f[1], d.DecidedBy("alice"), convOwner)
			say(resultLine(res, err))
		case f[0] == "turns" && len(f) == 2:
			turns, err := loop.Turns(ctx, f[1], 1, react.MaxTurnsRead, convOwner)
			if err != nil {
				say("error " + err.Error())
				continue
			}
			var parts []string
			for _, t := range turns {
				parts = append(parts, fmt.Sprintf("%d:%s", t.Index, t.User))
			}
			say(strings.Join(parts, "|"))
		default:
			say("error unknown command " + sc.Text())
		}
	}
	return sc.Err()
}

// resultLine renders the result of a message or a decision.
func resultLine(res react.Result, err error) string {
	var busy *react.ThreadBusyError
	switch {
	case errors.As(err, &busy):
		return fmt.Sprintf("busy waiting=%v run=%s", busy.Waiting, busy.Run)
	case errors.Is(err, react.ErrAlreadyResumed):
		return "already-resumed"
	case err != nil:
		return "error " + strings.ReplaceAll(err.Error(), "\n", " ")
	}
	var calls []string
	for _, c := range res.Calls {
		switch {
		case c.Builtin:
		case c.Call == react.CallDeferred && c.Execution == react.ExecNone:
			calls = append(calls, c.Tool+":declined") // the person's decline answered the held write
		default:
			calls = append(calls, fmt.Sprintf("%s:%s:%s", c.Tool, c.Outcome, codeName(c.Code)))
		}
	}
	line := fmt.Sprintf("%s turn=%d run=%s calls=%s", res.Status, res.Turn, res.Run, strings.Join(calls, ","))
	if s := res.Suspension; s != nil && s.Approval != nil {
		line += " waits=approval:" + s.Approval.Tool + " ticket=" + s.Ticket
	}
	return line
}

// proc is a long-lived child answering commands.
type proc struct {
	t    testing.TB
	name string
	in   io.WriteCloser
	out  *bufio.Reader
	kill func()
}

// conversing starts a conversation child named role (RoleConversation or
// a name that starts with it).
func (p Processes) conversing(t *testing.T, role string) *proc {
	t.Helper()
	cmd := p.child(t, role, "")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &proc{t: t, name: role, in: in, out: bufio.NewReader(stdout)}
	ended := false
	c.kill = func() {
		if ended {
			return
		}
		ended = true
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if p.Gone != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := p.Gone(ctx, role); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() {
		if !ended {
			ended = true
			_ = in.Close() // the child ends at the end of its input
			_ = cmd.Wait()
		}
	})
	return c
}

// send sends one command and returns the child's answer.
func (c *proc) send(fields ...string) string {
	c.t.Helper()
	if _, err := fmt.Fprintln(c.in, strings.Join(fields, "\t")); err != nil {
		// The child ended before it read the command: its output says
		// why (an "error" line when it could not open its store).
		said, _ := ReadLine(c.out, 5*time.Second)
		c.t.Fatalf("%s: %s: %v; the child's output: %q", c.name, fields[0], err, said)
	}
	line, err := ReadLine(c.out, time.Minute)
	if err != nil {
		c.t.Fatalf("%s: %s: %v", c.name, fields[0], err)
	}
	return line
}

var runOf = regexp.MustCompile(`run=(\S+)`)

// expectLine fails t unless line matches the pattern want, and returns the
// run id the line names.
func expectLine(t *testing.T, line, want, why string) string {
	t.Helper()
	if !regexp.MustCompile("^" + want + "$").MatchString(line) {
		t.Fatalf("%s: answered %q; want %q", why, line, want)
	}
	m := runOf.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return m[1]
}

// Conversation runs a conversation of seven messages to one thread across
// two processes on one store, as a chat service with two replicas serves
// it:
//
//   - message 1 (process A): the user gives order id A-17;
//   - message 2 (process B): "refund my order" suspends for the approval
//     of refund A-17; a message meanwhile (A) is refused, the thread
//     waiting; A approves (the refund runs), B's duplicate approval is
//     refused as already resumed;
//   - message 3 (B): order_status of A-17 is accepted (the user's words
//     of message 1, in another process), of an invented B-99 refused; the
//     model's second refund of A-17 waits for a new approval, which A
//     declines: one refund in all;
//   - messages 4 and 5: while A answers message 4 (its model waits), B's
//     message 5 is refused with the thread busy; A's finishes;
//   - message 6 (A) is killed with SIGKILL while it answers; B's next
//     message takes the thread (the dead run never stopped, the run store
//     does not hold it) and becomes turn 5.
func Conversation(t *testing.T, p Processes) {
	thread := "conversation-" + time.Now().Format("150405.000000")
	a, b := p.conversing(t, RoleConversation+"-a"), p.conversing(t, RoleConversation+"-b")

	expectLine(t, a.send("message", thread, "My order is A-17."), `finished turn=1 run=\S+ calls=`, "message 1 (A)")
	line := b.send("message", thread, "Refund my order, please.")
	run2 := expectLine(t, line, `suspended turn=2 run=\S+ calls= waits=approval:refund ticket=\S+`, "message 2 (B)")
	ticket2 := line[strings.LastIndex(line, "ticket=")+len("ticket="):]
	expectLine(t, a.send("message", thread, "Hello?"), `busy waiting=true run=`+regexp.QuoteMeta(run2), "a message while the thread waits for the approval (A)")
	expectLine(t, a.send("approve", run2, ticket2), `finished turn=2 run=\S+ calls=refund:SUCCESS:-`, "the approval (A)")
	expectLine(t, b.send("approve", run2, ticket2), `already-resumed`, "the same approval again, from the other process (B)")
	if n, err := Refunds(p.Dir); err != nil || n != 1 {
		t.Fatalf("refunds after message 2 = %d, %v; want 1", n, err)
	}

	run3 := expectLine(t, b.send("message", thread, "Where is my order?"),
		`suspended turn=3 run=\S+ calls=order_status:SUCCESS:-,order_status:REJECTED:PARAM_PROVENANCE_FOLLOW_UP_FIRST waits=approval:refund ticket=\S+`,
		"message 3 (B): A-17 of message 1 accepted, B-99 refused, the refund again waits for approval")
	expectLine(t, a.send("decline", run3), `finished turn=3 run=\S+ calls=order_status:SUCCESS:-,order_status:REJECTED:PARAM_PROVENANCE_FOLLOW_UP_FIRST,refund:declined`,
		"declining the second refund (A)")
	if n, err := Refunds(p.Dir); err != nil || n != 1 {
		t.Fatalf("refunds after message 3 = %d, %v; want 1 (the approved write ran once)", n, err)
	}

	expectLine(t, a.send("hold", thread, "Hello 4."), `held`, "message 4 (A) reaches its model")
	expectLine(t, b.send("message", thread, "Hello 5."), `busy waiting=false run=\S+`, "message 5 (B) while A answers message 4")
	expectLine(t, a.send("release"), `finished turn=4 run=\S+ calls=`, "message 4 (A) ends")

	expectLine(t, a.send("hold", thread, "Hello 6."), `held`, "message 6 (A) reaches its model")
	a.kill()
	expectLine(t, b.send("message", thread, "Hello 7."), `finished turn=5 run=\S+ calls=`, "message 7 (B) after A died answering message 6")
	if got, want := b.send("turns", thread), "1:My order is A-17.|2:Refund my order, please.|3:Where is my order?|4:Hello 4.|5:Hello 7."; got != want {
		t.Fatalf("the thread's turns = %q; want %q", got, want)
	}
}
