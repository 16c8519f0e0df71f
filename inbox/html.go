package inbox

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/inbox.css static/inbox.js
var staticFS embed.FS

// pages are the inbox's templates. html/template escapes every value for
// its context (text, attribute, URL), so no text of a model, a tool or a
// person is ever read as markup or script.
var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"utc": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
	"seg": url.PathEscape,
}).ParseFS(templateFS, "templates/*.html"))

// page is what a template renders.
type page struct {
	Title   string
	Base    string // the relative path from this page to the inbox's root
	Who     string
	Poll    int64 // milliseconds; 0: no polling
	Kind    string
	List    *listView
	Run     *runView
	Problem *problemView
}

// listView is the list page.
type listView struct {
	Kind    string // the filter: "", approval, follow_up, interrupted
	Rows    []rowView
	Skipped int
	Next    string // the next page's query; "" on the last page
	First   string // the first page's address, on later pages
	API     string // what an open list polls
	Events  string // what an open list follows (Server-Sent Events)
	Version string
}

// problemView is an error page.
type problemView struct {
	Status   int
	Code     string
	Title    string
	Text     string
	Incident string
	SignIn   string
	Decided  *decisionView
	Run      string // the run's page, relative to this one; "" for none
	Home     string // the list, relative to this page
}

func (h *Handler) pageOf(id Identity, base, kind string, l *listView, r *runView, p *problemView) page {
	who := id.Name
	if who == "" {
		who = id.Decider
	}
	return page{Title: h.title, Base: base, Who: who, Poll: h.poll.Milliseconds(), Kind: kind, List: l, Run: r, Problem: p}
}

// render writes the page, or a plain 500 if the template fails (it fails
// only on a programming error, which the tests would catch).
func (h *Handler) render(w http.ResponseWriter, status int, p page) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, "page", p); err != nil {
		inc := h.incident("render a page", err)
		http.Error(w, "The page could not be rendered; incident "+inc, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// static serves the stylesheet and the script.
func (h *Handler) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	var ctype string
	switch name {
	case "inbox.css":
		ctype = "text/css; charset=utf-8"
	case "inbox.js":
		ctype = "text/javascript; charset=utf-8"
	default:
		h.fail(w, r, false, notFound)
		return
	}
	b, err := staticFS.ReadFile("static/" + name)
	if err != nil { // embedded: cannot fail
		h.internal(w, r, false, "read a static file", err)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}
