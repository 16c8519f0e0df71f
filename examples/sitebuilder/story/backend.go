package story

import (
	"context"
	"fmt"
	"sync"

	"github.com/reactguard/reactguard/tool"
)

// Website is one of the user's existing websites, as list_websites returns
// it.
type Website struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Space is a space a website can be created in, as list_spaces returns it.
type Space struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Site is a created website, as create_site returns it.
type Site struct {
	SiteID  string `json:"site_id"`
	URL     string `json:"url"`
	SpaceID string `json:"space_id"`
}

// ListInput is the (empty) input of the list tools.
type ListInput struct{}

// CreateSiteInput is the input of create_site.
type CreateSiteInput struct {
	Name    string `json:"name" jsonschema:"the site's name, as the user gave it"`
	SpaceID string `json:"space_id" jsonschema:"the id of the space, from a list_spaces result"`
}

// Backend is the fake system behind the story's tools. Like a real
// backend that dedupes writes, it creates at most one site per idempotency
// key (the write gate's key, which create_site reads from its context with
// tool.RequestFrom and passes on), and it counts the sites it creates, so
// that a story can show that an approved write ran exactly once. The zero
// value is an empty backend ready to use; a Backend is safe for concurrent
// use and must not be copied after first use.
type Backend struct {
	mu      sync.Mutex
	created []Site
	byKey   map[string]Site
}

// Created returns a copy of the sites created so far, in order.
func (b *Backend) Created() []Site {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Site(nil), b.created...)
}

// Executions returns how many sites create_site created.
func (b *Backend) Executions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.created)
}

// create creates the site for the idempotency key, or returns the one it
// created for that key before. A call without a key always creates one.
func (b *Backend) create(key string, in CreateSiteInput) Site {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.byKey[key]; ok && key != "" {
		return s
	}
	s := Site{SiteID: fmt.Sprintf("site-%d", 1001+len(b.created)), URL: "https://spring-sale.example.com", SpaceID: in.SpaceID}
	b.created = append(b.created, s)
	if key != "" {
		if b.byKey == nil {
			b.byKey = make(map[string]Site)
		}
		b.byKey[key] = s
	}
	return s
}

// Tools returns a new catalog of the story's tools over b: list_websites
// and list_spaces (reads that always return the same records) and
// create_site, a write whose space_id must come from a list_spaces result
// (field id) and whose name from the user's words. The sites get the ids
// site-1001, site-1002, … in the order b creates them.
func (b *Backend) Tools() *tool.Catalog {
	listWebsites := tool.New("list_websites", "List the user's existing websites.",
		func(context.Context, ListInput) ([]Website, error) {
			return []Website{{ID: "w-1", Name: "Company Blog"}}, nil
		})
	listWebsites.Effect = tool.Read
	listSpaces := tool.New("list_spaces", "List the spaces a website can be created in.",
		func(context.Context, ListInput) ([]Space, error) {
			return []Space{{ID: "sp-7", Name: "Sales"}, {ID: "sp-42", Name: "Marketing"}}, nil
		})
	listSpaces.Effect = tool.Read
	createSite := tool.New("create_site", "Create a website in a space.",
		func(ctx context.Context, in CreateSiteInput) (Site, error) {
			req, _ := tool.RequestFrom(ctx) // the write gate's idempotency key
			return b.create(req.IdempotencyKey, in), nil
		})
	createSite.Effect = tool.Write
	createSite.Params = map[string]tool.Source{
		"name":     tool.User(),
		"space_id": tool.Result("list_spaces", "id"),
	}
	return tool.MustCatalog(listWebsites, listSpaces, createSite)
}
