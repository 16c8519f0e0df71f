package tool

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Catalog is a set of tools keyed by name, in registration order. The zero
// value is an empty catalog ready to use; a nil *Catalog reads as empty
// (Lookup, Names, Tools, Len) but cannot be added to. All methods are safe
// for concurrent use.
type Catalog struct {
	mu    sync.RWMutex
	tools map[string]*Tool
	order []string
}

// NewCatalog returns a catalog holding tools, or the first registration
// error (see [Catalog.Add]). A parameter source ([Result]) may name any
// tool of tools, in any order; one naming a tool that is not among them is
// refused.
func NewCatalog(tools ...*Tool) (*Catalog, error) {
	c := &Catalog{}
	for _, t := range tools {
		if t == nil {
			return nil, errors.New("tool: nil tool")
		}
		if err := c.add(t); err != nil {
			return nil, err
		}
	}
	for _, t := range tools {
		if err := c.checkSources(t); err != nil {
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

// Add registers t and resolves its input schema (and its contract's output
// schema). It refuses, with an error naming the tool and what to change, a
// nil tool, a tool without a name, Func or InputSchema, an input schema that
// does not resolve or is not an object schema, a negative Timeout, a Params
// key that is not a top-level property of the input schema, an invalid
// parameter [Source], a [Result] source naming a tool that is neither in
// the catalog nor t itself (add the tools a parameter comes from first, or
// build the catalog with [NewCatalog], which takes them in any order), a
// negative RetryPolicy.Attempts, and a name already registered. t must not
// be changed afterwards, nor added to two catalogs concurrently (Add
// records the resolved schema in t).
func (c *Catalog) Add(t *Tool) error {
	if t == nil {
		return errors.New("tool: nil tool")
	}
	if err := c.add(t); err != nil {
		return err
	}
	if err := c.checkSources(t); err != nil {
		c.remove(t.Name)
		return err
	}
	return nil
}

// add registers t without checking its sources against the catalog.
func (c *Catalog) add(t *Tool) error {
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

// remove unregisters the tool called name (a failed Add).
func (c *Catalog) remove(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tools, name)
	c.order = slices.DeleteFunc(c.order, func(n string) bool { return n == name })
}

// checkSources refuses a Result source of t naming a tool the catalog does
// not hold, and an Async contract whose Poll tool it does not hold or
// whose Param that tool does not take.
func (c *Catalog) checkSources(t *Tool) error {
	if t.Contract != nil && t.Contract.Async != nil {
		a := t.Contract.Async
		poll, ok := c.Lookup(a.Poll)
		if !ok {
			return fmt.Errorf("tool %q: Async.Poll names %q, which is not in the catalog; add it or correct the contract", t.Name, a.Poll)
		}
		if _, ok := poll.InputSchema.Properties[a.Param]; !ok {
			return fmt.Errorf("tool %q: Async.Param %q is not a parameter of %q (it has %s)", t.Name, a.Param, a.Poll, propertyList(poll.InputSchema))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(t.Params)) {
		s := t.Params[p]
		if s.Kind != FromResult {
			continue
		}
		if _, ok := c.Lookup(s.Tool); !ok {
			return fmt.Errorf("tool %q: parameter %q must come from a result of %q, which is not in the catalog; add %q to the catalog or correct the source", t.Name, p, s.Tool, s.Tool)
		}
	}
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
