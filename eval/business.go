package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/tool"
)

// BusinessSpec is the part of a [ContractSpec] that says what a result is
// beyond its shape (tool.Contract): where it came from and when, whether
// it is one page of several, an accepted job that is not done, or a wall.
// Paths are dotted, arrays walked (the first value found is used).
type BusinessSpec struct {
	// Provenance names the paths of the result's provenance.
	Provenance *ProvenanceSpec `json:"provenance,omitempty"`
	// MaxAge is how old a result may be and still be the latest data, as
	// a Go duration ("15m"); it needs Provenance.FetchedAt. A node that
	// requires the tool's latest data ("require": {"tool": "latest"})
	// finds an older result insufficient. Results are dated relative to
	// [Epoch], the evaluation's "now".
	MaxAge string `json:"max_age,omitempty"`
	// NextPage is the path of the next page's cursor (absent or "" on the
	// last page) and PageParam the argument that takes it; a node that
	// requires complete data ("complete") finds a page followed by more
	// insufficient.
	NextPage  string `json:"next_page,omitempty"`
	PageParam string `json:"page_param,omitempty"`
	// Pending says how a result announces an accepted job that is not
	// done.
	Pending *PendingSpec `json:"pending,omitempty"`
	// Walls recognise results that are a captcha, a login or a rate-limit
	// page.
	Walls []WallSpec `json:"walls,omitempty"`
}

// ProvenanceSpec names the paths of a result's provenance; FetchedAt holds
// an RFC 3339 time.
type ProvenanceSpec struct {
	FetchedAt string `json:"fetched_at,omitempty"`
	Source    string `json:"source,omitempty"`
	ObjectID  string `json:"object_id,omitempty"`
	Version   string `json:"version,omitempty"`
	Voucher   string `json:"voucher,omitempty"`
}

// PendingSpec says how a result announces an accepted job: a result whose
// value at Path equals Equals is a job not done, whose id is at Job; Poll
// (with its argument Param) reports its status.
type PendingSpec struct {
	Path   string          `json:"path"`
	Equals json.RawMessage `json:"equals"`
	Job    string          `json:"job"`
	Poll   string          `json:"poll"`
	Param  string          `json:"param"`
}

// WallSpec recognises a wall: a result whose value at Path equals Equals
// is a Wall (captcha, login or rate_limit); Detail is what the model
// reads.
type WallSpec struct {
	Path   string          `json:"path"`
	Equals json.RawMessage `json:"equals"`
	Wall   string          `json:"wall"`
	Detail string          `json:"detail,omitempty"`
}

// apply sets what b describes on c.
func (b BusinessSpec) apply(c *tool.Contract) error {
	if p := b.Provenance; p != nil {
		paths := *p
		c.Provenance = func(result any) evidence.Provenance {
			v := decoded(result)
			out := evidence.Provenance{Source: text(v, paths.Source), ObjectID: text(v, paths.ObjectID), Version: text(v, paths.Version), Voucher: text(v, paths.Voucher)}
			if s := text(v, paths.FetchedAt); s != "" {
				out.FetchedAt, _ = time.Parse(time.RFC3339, s)
			}
			return out
		}
	}
	if b.MaxAge != "" {
		d, err := time.ParseDuration(b.MaxAge)
		if err != nil || d <= 0 {
			return fmt.Errorf("max_age %q is not a positive Go duration", b.MaxAge)
		}
		if b.Provenance == nil || b.Provenance.FetchedAt == "" {
			return errors.New("max_age needs provenance.fetched_at")
		}
		c.MaxAge = d
	}
	if b.NextPage != "" || b.PageParam != "" {
		if b.NextPage == "" || b.PageParam == "" {
			return errors.New("next_page and page_param go together")
		}
		path := b.NextPage
		c.Paging = &tool.Paging{Param: b.PageParam, Next: func(result any) string { return text(decoded(result), path) }}
	}
	if p := b.Pending; p != nil {
		if p.Path == "" || p.Job == "" || p.Poll == "" || p.Param == "" || !json.Valid(p.Equals) {
			return errors.New("pending needs path, equals (JSON), job, poll and param")
		}
		spec := *p
		c.Async = &tool.Async{Poll: p.Poll, Param: p.Param, Pending: func(result any) (string, bool) {
			v := decoded(result)
			return text(v, spec.Job), equalAt(v, spec.Path, spec.Equals)
		}}
	}
	if len(b.Walls) > 0 {
		walls := make([]tool.Wall, len(b.Walls))
		for i, w := range b.Walls {
			switch w.Wall {
			case "captcha":
				walls[i] = tool.WallCaptcha
			case "login":
				walls[i] = tool.WallLogin
			case "rate_limit":
				walls[i] = tool.WallRate
			default:
				return fmt.Errorf("wall %q (want captcha, login or rate_limit)", w.Wall)
			}
			if w.Path == "" || !json.Valid(w.Equals) {
				return fmt.Errorf("wall %d needs path and equals (JSON)", i+1)
			}
		}
		specs := b.Walls
		c.Blocked = func(result any) (tool.Wall, string) {
			v := decoded(result)
			for i, w := range specs {
				if equalAt(v, w.Path, w.Equals) {
					return walls[i], w.Detail
				}
			}
			return tool.NoWall, ""
		}
	}
	return nil
}

// decoded is a result as generic JSON (nil when it is not JSON).
func decoded(result any) any {
	raw, err := json.Marshal(result)
	if err != nil {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// text is the first scalar at path as text ("" when none).
func text(v any, path string) string {
	if path == "" {
		return ""
	}
	for _, x := range at(v, strings.Split(path, ".")) {
		switch s := x.(type) {
		case string:
			return s
		case json.Number:
			return s.String()
		case bool:
			if s {
				return "true"
			}
			return "false"
		}
	}
	return ""
}

// equalAt reports whether a value at path is canonically want.
func equalAt(v any, path string, want json.RawMessage) bool {
	return Condition{Path: path, Equals: want}.holds(v)
}
