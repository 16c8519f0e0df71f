package inbox_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/reactguard/reactguard/inbox"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// The inbox over a loop whose runs stop for approvals, behind the host's
// own sign-in (here a header), mounted under /approvals/.
func ExampleNew() {
	send := tool.New("send_invoice", "Send an invoice.", func(context.Context, struct {
		To string `json:"to"`
	}) (string, error) {
		return "sent", nil
	})
	send.Effect = tool.Write
	loop, _ := react.New(react.Config{
		Model:    reacttest.Script(reacttest.Calls(reacttest.Call("c1", "send_invoice", `{"to":"acme"}`))),
		Tools:    tool.MustCatalog(send),
		Runs:     runstore.NewMemory(),
		Audit:    runstore.NewMemoryAudit(),
		Observer: react.DiscardObserver,
		NewRunID: func(context.Context) string { return "run-1" },
	})
	alice := react.Owner{Tenant: "acme", User: "alice"}
	_, _ = loop.Run(context.Background(), react.Node{Tools: []string{"send_invoice"}, HostApproval: true}, "send acme its invoice", react.WithOwner(alice))

	h, err := inbox.New(inbox.Options{
		Loop: loop,
		Authenticate: func(r *http.Request) (inbox.Identity, error) {
			if r.Header.Get("X-User") != "alice" { // the host's session check
				return inbox.Identity{}, inbox.ErrSignIn
			}
			return inbox.Identity{Owner: alice, Decider: "alice@acme"}, nil
		},
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/approvals/", http.StripPrefix("/approvals", h))

	req := httptest.NewRequest(http.MethodGet, "/approvals/runs/run-1", nil)
	req.Header.Set("X-User", "alice")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	page := rec.Body.String()
	fmt.Println(rec.Code, strings.Contains(page, "Approve <code>send_invoice</code>?"), strings.Contains(page, `name="ticket"`))
	// Output: 200 true true
}
