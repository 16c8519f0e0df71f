// Command inbox starts an agent whose runs stop for a person's approval
// or answer, and the approvals inbox (package inbox) where that person
// decides, on localhost, with every run, decision and write kept in a
// SQLite file.
//
//	cd stores/sqlite
//	go run ./examples/inbox        # then open http://127.0.0.1:8080/ and sign in as alice
//
// At its first start the agent (a scripted model: offline, no keys) begins
// three tasks for alice of the tenant acme and one for carol: a payment
// and a website to approve, a question to answer, and carol's payment,
// which alice never sees (the acme team sees all four). Approve, decline
// or answer in the browser: each approved write runs once, and a run that
// needs another decision comes back to the list. Stop the program and
// start it again: what still waits is there, with its history.
//
// The sign-in page is a stand-in for the host's own authentication: it
// sets a cookie naming the person. The snapshot key is kept beside the
// database (<file>.key); a service keeps it with its other secrets.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/inbox"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/stores/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil)
	stop()
	os.Exit(code)
}

// run is the program; it serves until ctx ends and returns the exit code.
// ready, when set, is called with the inbox's address once it listens.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(url string)) int {
	fs := flag.NewFlagSet("inbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "the address to serve the inbox on (keep it on localhost: the demo sign-in is no authentication)")
	state := fs.String("state", filepath.Join(os.TempDir(), "reactguard-inbox.db"), "the SQLite file that keeps the runs, decisions and writes")
	more := fs.Bool("new", false, "start the demo's tasks again, even if some still wait")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := serve(ctx, *addr, *state, *more, stdout, ready); err != nil {
		_, _ = fmt.Fprintln(stderr, "inbox:", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, addr, state string, more bool, out io.Writer, ready func(string)) error {
	store, err := sqlite.Open(ctx, state, nil)
	if err != nil {
		return err
	}
	defer func() { _ = store.Close() }()
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	key, err := snapshotKey(state + ".key")
	if err != nil {
		return err
	}
	backend := &Backend{Out: out}
	live := inbox.NewLive() // open pages update as soon as a run of this loop stops
	loop, err := react.New(react.Config{
		Model: Agent(), Tools: backend.Tools(),
		Guards: &guard.Options{Ledger: store.Evidence(), Approvals: store.Approvals(), WriteLedger: store.WriteLedger()},
		Claims: store.Claims(), Runs: store.Runs(), Audit: store.Audit(),
		SnapshotKeys: [][]byte{key},
		Observer:     live,
	})
	if err != nil {
		return err
	}
	waiting, err := store.Runs().List(ctx, runstore.Filter{Limit: 1}) // an operator's view: every owner
	if err != nil {
		return err
	}
	if more || len(waiting.Runs) == 0 {
		for _, t := range Tasks() {
			res, err := loop.Run(ctx, t.Node, t.Words, react.WithOwner(t.Owner))
			if err != nil {
				return err
			}
			_, _ = fmt.Fprintf(out, "%s's task %q: %s\n", t.Owner.User, t.Words, res.Status)
		}
	}

	h, err := inbox.New(inbox.Options{
		Loop:         loop,
		Live:         live,
		Authenticate: demoSignIn,
		SignInURL:    "/signin",
		FormKey:      formKey(key),
		Title:        "Approvals (reactguard demo)",
		Logger:       slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/approvals/", http.StripPrefix("/approvals", h))
	mux.HandleFunc("GET /signin", signInPage)
	mux.HandleFunc("POST /signin", signIn)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/signin", http.StatusSeeOther) })

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	_, _ = fmt.Fprintf(out, "the inbox: %s (sign in as alice, carol or the acme team); Ctrl+C stops it; state in %s\n", url, state)
	if ready != nil {
		ready(url)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx) // waits for a decision being applied
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// people are the demo's sign-ins: who they are to the inbox.
var people = map[string]inbox.Identity{
	"alice": {Owner: react.Owner{Tenant: "acme", User: "alice"}, Decider: "alice@acme.example", Name: "Alice (acme)"},
	"carol": {Owner: react.Owner{Tenant: "acme", User: "carol"}, Decider: "carol@acme.example", Name: "Carol (acme)"},
	"team":  {Owner: react.Owner{Tenant: "acme"}, Decider: "approvals@acme.example", Name: "the acme approvals team"},
}

// demoSignIn is the host's authentication of the demo: the cookie that
// the sign-in page set. A real host checks its own session here.
func demoSignIn(r *http.Request) (inbox.Identity, error) {
	c, err := r.Cookie("demo-user")
	if err != nil {
		return inbox.Identity{}, inbox.ErrSignIn
	}
	id, ok := people[c.Value]
	if !ok {
		return inbox.Identity{}, inbox.ErrSignIn
	}
	return id, nil
}

var signInTmpl = template.Must(template.New("").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in — reactguard demo</title><link rel="stylesheet" href="/approvals/static/inbox.css"></head>
<body><main><h1>Who are you?</h1>
<p>This demo has no passwords: pick a person. A real service signs people in its own way and tells the inbox who they are.</p>
<form method="post" action="/signin" class="decision">
{{range .}}<button type="submit" name="as" value="{{.Key}}">{{.Name}}</button>{{end}}
</form></main></body></html>`))

func signInPage(w http.ResponseWriter, _ *http.Request) {
	type person struct{ Key, Name string }
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'")
	_ = signInTmpl.Execute(w, []person{{"alice", people["alice"].Name}, {"carol", people["carol"].Name}, {"team", people["team"].Name}})
}

func signIn(w http.ResponseWriter, r *http.Request) {
	as := r.PostFormValue("as")
	if _, ok := people[as]; !ok {
		http.Error(w, "unknown person", http.StatusBadRequest)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: "demo-user", Value: as, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/approvals/", http.StatusSeeOther)
}

// formKey derives the inbox's form key from the snapshot key, so that the
// demo keeps one secret; a service gives each key its own secret.
func formKey(snapshot []byte) []byte {
	m := hmac.New(sha256.New, snapshot)
	m.Write([]byte("reactguard demo: the inbox's form key"))
	return m.Sum(nil)
}

// snapshotKey reads the key at path, creating it with random bytes on
// first use.
func snapshotKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err == nil && len(key) >= react.MinSnapshotKey {
		return key, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key = make([]byte, react.MinSnapshotKey)
	_, _ = rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process created it first
		return snapshotKey(path)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(key); err != nil {
		_ = f.Close()
		return nil, err
	}
	return key, f.Close()
}
