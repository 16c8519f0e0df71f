package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// Task is one of the demo's tasks: the user's words, the node, the owner.
type Task struct {
	Owner react.Owner
	Node  react.Node
	Words string
}

// desk is the node of every task: the backend's tools, the agent's own
// approvals (it calls builtin_node_approval with its reason).
var desk = react.Node{
	Name:         "back-office",
	Instructions: "Do the back-office task the user asks for.",
	Tools:        []string{"find_invoice", "pay_invoice", "list_spaces", "create_site", "send_report"},
	MaxRounds:    16,
}

// Tasks returns the tasks the demo starts.
func Tasks() []Task {
	alice, carol := react.Owner{Tenant: "acme", User: "alice"}, react.Owner{Tenant: "acme", User: "carol"}
	return []Task{
		{alice, desk, "Pay invoice INV-2041 from Northwind Traders."},
		{alice, desk, `Create a website called "Spring Sale" in the Marketing space.`},
		{alice, desk, "Send the quarterly report."},
		{carol, desk, "Pay invoice INV-2077 from Contoso."},
	}
}

// Backend is the fake system behind the tools. It prints each write it
// applies, and applies a write once per idempotency key (the write gate's
// key), as a real backend that dedupes writes does. Safe for concurrent
// use.
type Backend struct {
	Out io.Writer

	mu      sync.Mutex
	applied map[string]bool
	writes  int
}

// Writes returns how many writes the backend applied.
func (b *Backend) Writes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.writes
}

// apply applies the write named by key once, printing what.
func (b *Backend) apply(ctx context.Context, what string) {
	req, _ := tool.RequestFrom(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.applied == nil {
		b.applied = map[string]bool{}
	}
	if req.IdempotencyKey != "" && b.applied[req.IdempotencyKey] {
		return
	}
	b.applied[req.IdempotencyKey] = true
	b.writes++
	if b.Out != nil {
		_, _ = fmt.Fprintf(b.Out, "WRITE %s (run %s)\n", what, req.Run)
	}
}

type invoiceIn struct {
	Invoice string `json:"invoice" jsonschema:"the invoice number the user gave"`
}

// Invoice is an open invoice, as find_invoice returns it.
type Invoice struct {
	Invoice   string `json:"invoice"`
	VendorID  string `json:"vendor_id"`
	Vendor    string `json:"vendor"`
	AmountEUR int    `json:"amount_eur"`
	IBAN      string `json:"iban"`
}

var invoices = map[string]Invoice{
	"INV-2041": {"INV-2041", "v-118", "Northwind Traders", 1250, "DE44 5001 0517 5407 3249 31"},
	"INV-2077": {"INV-2077", "v-204", "Contoso", 480, "NL91 ABNA 0417 1643 00"},
}

type payIn struct {
	Invoice   string `json:"invoice"`
	VendorID  string `json:"vendor_id"`
	AmountEUR int    `json:"amount_eur"`
	IBAN      string `json:"iban"`
}

type siteIn struct {
	Name    string `json:"name"`
	SpaceID string `json:"space_id"`
}

type reportIn struct {
	To      string `json:"to"`
	Quarter string `json:"quarter"`
}

// Tools returns the catalog over b. The writes declare where each argument
// must come from: the inbox shows it next to the value.
func (b *Backend) Tools() *tool.Catalog {
	find := tool.New("find_invoice", "Find an open invoice by its number.", func(_ context.Context, in invoiceIn) (Invoice, error) {
		inv, ok := invoices[in.Invoice]
		if !ok {
			return Invoice{}, tool.NotFound("no open invoice %s", in.Invoice)
		}
		return inv, nil
	})
	find.Effect = tool.Read
	pay := tool.New("pay_invoice", "Pay an invoice by bank transfer.", func(ctx context.Context, in payIn) (map[string]string, error) {
		b.apply(ctx, fmt.Sprintf("paid %s: %d EUR to %s (%s)", in.Invoice, in.AmountEUR, in.VendorID, in.IBAN))
		return map[string]string{"transfer": "tr-" + in.Invoice, "status": "sent"}, nil
	})
	pay.Effect = tool.Write
	pay.Params = map[string]tool.Source{
		"invoice":    tool.User(),
		"vendor_id":  tool.Result("find_invoice", "vendor_id"),
		"amount_eur": tool.Result("find_invoice", "amount_eur"),
		"iban":       tool.Result("find_invoice", "iban"),
	}
	spaces := tool.New("list_spaces", "List the spaces a website can be created in.", func(context.Context, struct{}) ([]map[string]string, error) {
		return []map[string]string{{"id": "sp-7", "name": "Sales"}, {"id": "sp-42", "name": "Marketing"}}, nil
	})
	spaces.Effect = tool.Read
	site := tool.New("create_site", "Create a website in a space.", func(ctx context.Context, in siteIn) (map[string]string, error) {
		b.apply(ctx, fmt.Sprintf("created the site %q in %s", in.Name, in.SpaceID))
		return map[string]string{"site_id": "site-1001", "url": "https://spring-sale.example.com"}, nil
	})
	site.Effect = tool.Write
	site.Params = map[string]tool.Source{"name": tool.User(), "space_id": tool.Result("list_spaces", "id")}
	report := tool.New("send_report", "Email a report.", func(ctx context.Context, in reportIn) (map[string]string, error) {
		b.apply(ctx, fmt.Sprintf("sent the %s report to %s", in.Quarter, in.To))
		return map[string]string{"status": "sent"}, nil
	})
	report.Effect = tool.Write
	report.Params = map[string]tool.Source{"to": tool.User()}
	return tool.MustCatalog(find, pay, spaces, site, report)
}

// Agent returns the demo's scripted model. Like a real LLM it keeps no
// state: every turn is computed from the conversation, so a run resumes
// in any process. It calls each write directly, asks for the approval the
// write gate requires with its reason, and finishes once the write ran
// (or fails the task when the person declined).
func Agent() react.Model { return reacttest.Func(agent) }

func agent(req react.Request) react.Response {
	var task string
	for _, m := range req.Messages {
		if m.Role == react.RoleUser {
			task = m.Content
			break
		}
	}
	msg := func(id string) (react.Message, bool) { return reacttest.ToolMessage(req, id) }
	// write calls the write (c3), asks for its approval (c4), calls it
	// again once approved (c5), and finishes.
	write := func(name string, args any, reason string) react.Response {
		b, _ := json.Marshal(args)
		if _, ok := msg("c3"); !ok {
			return reacttest.Calls(reacttest.Call("c3", name, string(b)))
		}
		approval, ok := msg("c4")
		if !ok {
			return reacttest.Calls(reacttest.Approval("c4", name, reason))
		}
		if strings.HasPrefix(approval.Content, "the user declined") {
			return reacttest.Calls(reacttest.FailNode("c9", approval.Content))
		}
		if _, ok := msg("c5"); !ok {
			return reacttest.Calls(reacttest.Call("c5", name, string(b)))
		}
		return reacttest.Calls(reacttest.Finish("c9", "done"))
	}
	switch {
	case strings.HasPrefix(task, "Pay invoice "):
		number := strings.Fields(task)[2]
		found, ok := msg("c1")
		if !ok {
			return reacttest.Calls(reacttest.Call("c1", "find_invoice", fmt.Sprintf(`{"invoice":%q}`, number)))
		}
		var inv Invoice
		if i := strings.IndexByte(found.Content, '{'); found.IsError || i < 0 || json.Unmarshal([]byte(found.Content[i:]), &inv) != nil {
			return reacttest.Calls(reacttest.FailNode("c9", "the invoice was not found"))
		}
		return write("pay_invoice", payIn{Invoice: inv.Invoice, VendorID: inv.VendorID, AmountEUR: inv.AmountEUR, IBAN: inv.IBAN},
			fmt.Sprintf("%s from %s is due; this transfers %d EUR", inv.Invoice, inv.Vendor, inv.AmountEUR))
	case strings.HasPrefix(task, "Create a website"):
		if _, ok := msg("c1"); !ok {
			return reacttest.Calls(reacttest.Call("c1", "list_spaces", `{}`))
		}
		return write("create_site", siteIn{Name: "Spring Sale", SpaceID: "sp-42"}, `create "Spring Sale" in Marketing (sp-42)`)
	case strings.HasPrefix(task, "Send the quarterly report"):
		answer, ok := msg("c1")
		if !ok {
			return reacttest.Calls(reacttest.FollowUp("c1", "Which address should I send the quarterly report to?"))
		}
		to := strings.TrimPrefix(answer.Content, "the user answered: ")
		return write("send_report", reportIn{To: to, Quarter: "Q3"}, "the report leaves the company")
	}
	return reacttest.Calls(reacttest.FailNode("c9", "I cannot do this task"))
}
