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

// Backend is the fake system behind the story's tools. It counts the sites
// it creates, so that a story can show that an approved write ran exactly
// once. The zero value is an empty backend ready to use; a Backend is safe
// for concurrent use and must not be copied after first use.
type Backend struct {
	mu      sync.Mutex
	created []Site
}

// Created returns a copy of the sites created so far, in order.
func (b *Backend) Created() []Site {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Site(nil), b.created...)
}

// Executions returns how often create_site ran.
func (b *Backend) Executions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.created)
}

func (b *Backend) create(in CreateSiteInput) Site {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Site{SiteID: fmt.Sprintf("site-%d", 1001+len(b.created)), URL: "https://spring-sale.example.com", SpaceID: in.SpaceID}
	b.created = append(b.created, s)
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
		func(_ context.Context, in CreateSiteInput) (Site, error) { return b.create(in), nil })
	createSite.Effect = tool.Write
	createSite.Params = map[string]tool.Source{
		"name":     tool.User(),
		"space_id": tool.Result("list_spaces", "id"),
	}
	return tool.MustCatalog(listWebsites, listSpaces, createSite)
}
