package tool

import (
	"fmt"
	"slices"
	"sync"
)

// Catalog is a set of tools keyed by name. Add tools before use; lookups
// are safe for concurrent use with each other and with Add.
type Catalog struct {
	mu    sync.RWMutex
	tools map[string]*Tool
	order []string
}

// NewCatalog returns a catalog holding tools, or the first registration
// error.
func NewCatalog(tools ...*Tool) (*Catalog, error) {
	c := &Catalog{}
	for _, t := range tools {
		if err := c.Add(t); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// MustCatalog is like [NewCatalog] but panics on error, for catalogs built
// from program text.
func MustCatalog(tools ...*Tool) *Catalog {
	c, err := NewCatalog(tools...)
	if err != nil {
		panic(err)
	}
	return c
}

// Add registers t. It refuses a nil tool, a tool without a name, function
// or input schema, a schema that does not resolve, an invalid parameter
// source, and a name already registered. t must not be changed afterwards.
func (c *Catalog) Add(t *Tool) error {
	if t == nil {
		return fmt.Errorf("tool: nil tool")
	}
	if err := t.prepare(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tools == nil {
		c.tools = make(map[string]*Tool)
	}
	if _, dup := c.tools[t.Name]; dup {
		return fmt.Errorf("tool: duplicate tool name %q", t.Name)
	}
	c.tools[t.Name] = t
	c.order = append(c.order, t.Name)
	return nil
}

// Lookup returns the tool named name.
func (c *Catalog) Lookup(name string) (*Tool, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.RLock()
	t, ok := c.tools[name]
	c.mu.RUnlock()
	return t, ok
}

// Names returns the tool names in registration order.
func (c *Catalog) Names() []string {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.order)
}

// Tools returns the tools in registration order.
func (c *Catalog) Tools() []*Tool {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*Tool, len(c.order))
	for i, n := range c.order {
		out[i] = c.tools[n]
	}
	return out
}

// Len returns the number of tools.
func (c *Catalog) Len() int {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.order)
}
