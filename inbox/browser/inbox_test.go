package browser_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/inbox"
	"github.com/reactguard/reactguard/inbox/browser"
	"github.com/reactguard/reactguard/internal/inboxtest"
	"github.com/reactguard/reactguard/react"
)

var screenshots = flag.String("screenshots", "", "write the list's and a run's screenshots (PNG) to this directory (the repository's docs/)")

// root is the browser every test opens its tabs in; nil when the tests
// are skipped.
var root context.Context

func TestMain(m *testing.M) {
	flag.Parse()
	ctx, cancel, err := browser.New(context.Background())
	if err != nil {
		if os.Getenv("CI") == "true" || !errors.Is(err, browser.ErrNoBrowser) {
			fmt.Fprintf(os.Stderr, "inbox/browser: cannot start Chromium: %v\n", err)
			os.Exit(1)
		}
		fmt.Println("inbox/browser: browser tests skipped: no Chromium on this machine (apt-get install chromium, or set CHROME_PATH; CI=true makes them required)")
		os.Exit(m.Run())
	}
	root = ctx
	code := m.Run()
	cancel()
	if code == 0 {
		if err := goleak.Find(); err != nil { // every tab's and the browser's goroutines end with their contexts
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

var (
	alice = react.Owner{Tenant: "acme", User: "alice"}
	bob   = react.Owner{Tenant: "beta", User: "bob"}
)

// world returns the inbox's test world with pages that poll every 100 ms.
func world(t *testing.T) *inboxtest.World {
	t.Helper()
	if root == nil {
		t.Skip("no Chromium")
	}
	return inboxtest.New(t, &inboxtest.Options{Inbox: func(o *inbox.Options) { o.Poll = 100 * time.Millisecond }})
}

// tab opens a tab in a browser context of its own (its own cookies),
// signed in as who ("tenant:user"), bounded to 30 s.
func tab(t *testing.T, w *inboxtest.World, who string, actions ...chromedp.Action[chromedp.Void]) context.Context {
	t.Helper()
	tctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	run(t, tctx) // opens the tab: its life is tctx's, not the timeout's
	ctx, stop := context.WithTimeout(tctx, 30*time.Second)
	t.Cleanup(stop)
	run(t, ctx, append(actions, chromedp.Navigate(w.Server.URL+"/signin?as="+url.QueryEscape(who)), chromedp.WaitVisible(chromedp.CSS("h1")))...)
	return ctx
}

func run(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		fatal(t, ctx, err)
	}
}

// get runs a that returns a value.
func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		fatal(t, ctx, err)
	}
	return v
}

func fatal(t *testing.T, ctx context.Context, err error) {
	t.Helper()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	t.Fatalf("browser: %v\nat %s:\n%s", err, loc, body)
}

// command is the protocol command c with params p, as an action.
func command[P any](c cdp.Command[P, cdp.Empty], p P) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, c, p)
		return err
	})
}

func noScript(off bool) chromedp.Action[chromedp.Void] {
	return command(emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off})
}

func timeZone(id string) chromedp.Action[chromedp.Void] {
	return command(emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: id})
}

// text returns the visible text of the page's main element.
func text(t *testing.T, ctx context.Context) string {
	t.Helper()
	return get(t, ctx, chromedp.Text(chromedp.CSS("main")))
}

// heading waits for an h1 holding want.
func heading(want string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(fmt.Sprintf(`//h1[contains(., %q)]`, want))
}

func runURL(w *inboxtest.World, id string) string { return w.URL("/runs/" + url.PathEscape(id)) }

// TestApprove: list → open → approve → the write ran once, and the run's
// page shows who approved.
func TestApprove(t *testing.T) {
	w := world(t)
	id := w.Start(alice, "pay alice 5")
	ctx := tab(t, w, "acme:alice")
	if !strings.Contains(text(t, ctx), "amount=5") {
		t.Fatalf("the list does not show the call:\n%s", text(t, ctx))
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`a[href="runs/`+id+`"]`)), heading("Approve pay?"))
	page := text(t, ctx)
	for _, want := range []string{`"p-alice"`, `field "payee_id" of a find_payee result. Found in the result of call c1.`, "Found in the user's request."} {
		if !strings.Contains(page, want) {
			t.Errorf("the run's page lacks %q:\n%s", want, page)
		}
	}
	run(t, ctx, chromedp.Click(chromedp.CSS("#approve")), heading("no longer waits"))
	if got := text(t, ctx); !strings.Contains(got, "approved by you (alice@acme) · pay") {
		t.Errorf("the page after approving:\n%s", got)
	}
	if paid, twice := w.Payments("alice"); paid != 1 || twice {
		t.Errorf("payments to alice = %d (a key twice: %v); want 1", paid, twice)
	}
}

// TestDecline: the reason typed reaches the history; the write never runs.
func TestDecline(t *testing.T) {
	w := world(t)
	id := w.Start(alice, "pay alice 5")
	ctx := tab(t, w, "acme:alice")
	run(t, ctx, chromedp.Navigate(runURL(w, id)), heading("Approve pay?"),
		chromedp.SendKeys(chromedp.CSS("#decline-text"), "wrong invoice"),
		chromedp.Click(chromedp.CSS("#decline")), heading("no longer waits"))
	if got := text(t, ctx); !strings.Contains(got, "declined by you (alice@acme) · pay: wrong invoice") {
		t.Errorf("the page after declining:\n%s", got)
	}
	if paid, _ := w.Payments("alice"); paid != 0 {
		t.Errorf("a declined payment ran %d times", paid)
	}
}

// TestAnswerWithKeyboard: the question is answered and the next write
// approved with the keyboard alone: Tab to the field, type, Enter on the
// button.
func TestAnswerWithKeyboard(t *testing.T) {
	w := world(t)
	id := w.Start(alice, "close an account")
	ctx := tab(t, w, "acme:alice")
	run(t, ctx, chromedp.Navigate(runURL(w, id)), heading("asks you a question"),
		chromedp.Focus(chromedp.CSS("#answer-text")), chromedp.KeyEvent("ACC-7"),
		chromedp.KeyEvent("\t"), // to the button
	)
	focused := get(t, ctx, chromedp.Evaluate[string](`document.activeElement.id`))
	if focused != "answer" {
		t.Fatalf("Tab from the answer reached %q; want the send button", focused)
	}
	run(t, ctx, chromedp.KeyEvent("\r"), heading("Approve close_account?"))
	if got := text(t, ctx); !strings.Contains(got, "Found in the user's answer 1") || !strings.Contains(got, "answered by you (alice@acme): ACC-7") {
		t.Errorf("the page after answering:\n%s", got)
	}
	run(t, ctx, chromedp.Focus(chromedp.CSS("#approve")), chromedp.KeyEvent("\r"), heading("no longer waits"))
	if n := w.Closed("ACC-7"); n != 1 {
		t.Errorf("ACC-7 closed %d times; want 1", n)
	}
}

// TestDoubleClick: a double click on Approve, with and without
// JavaScript, runs the write once and ends on a page that says it was
// approved.
func TestDoubleClick(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(fmt.Sprintf("javascript=%v", js), func(t *testing.T) {
			w := world(t)
			w.Gate = make(chan struct{})
			id := w.Start(alice, "pay alice 5")
			ctx := tab(t, w, "acme:alice", noScript(!js))
			run(t, ctx, chromedp.Navigate(runURL(w, id)), heading("Approve pay?"), chromedp.DoubleClick(chromedp.CSS("#approve")))
			if !inboxtest.Eventually(10*time.Second, func() bool {
				p, err := w.Loop.Pending(context.Background(), id, react.WithOwner(alice))
				return err == nil && p.Decided != nil
			}) {
				t.Fatal("the approval was not recorded")
			}
			time.Sleep(100 * time.Millisecond) // room for a second request, if the browser sent one
			close(w.Gate)
			run(t, ctx, chromedp.WaitVisible(`//h1[contains(., "no longer waits") or contains(., "Already decided")]`))
			if got := text(t, ctx); !strings.Contains(got, "approved by you") {
				t.Errorf("the page after a double click:\n%s", got)
			}
			if paid, twice := w.Payments("alice"); paid != 1 || twice {
				t.Errorf("payments = %d (a key twice: %v); want 1", paid, twice)
			}
		})
	}
}

// TestStaleTab: alice's tab shows the approval while her tenant's team
// declines it. With JavaScript the tab says so by itself and disables its
// buttons; without, its approval is refused with who decided. The write
// never runs.
func TestStaleTab(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(fmt.Sprintf("javascript=%v", js), func(t *testing.T) {
			w := world(t)
			id := w.Start(alice, "pay alice 5")
			a := tab(t, w, "acme:alice", noScript(!js))
			run(t, a, chromedp.Navigate(runURL(w, id)), heading("Approve pay?"))
			team := tab(t, w, "acme:")
			run(t, team, chromedp.Navigate(runURL(w, id)), heading("Approve pay?"),
				chromedp.SendKeys(chromedp.CSS("#decline-text"), "paid already"),
				chromedp.Click(chromedp.CSS("#decline")), heading("no longer waits"))
			if js {
				run(t, a, chromedp.WaitVisible(chromedp.CSS("#stale")))
				disabled := get(t, a, chromedp.Evaluate[bool](`document.getElementById('approve').disabled`))
				if !disabled {
					t.Error("the stale tab's Approve button is enabled")
				}
				// The tab learns of the decision either while the run applies
				// it (who decided, when) or after (no longer waits): both are true.
				if got := text(t, a); !strings.Contains(got, "no longer waits for a decision") && !strings.Contains(got, "This request was declined by team@acme at") {
					t.Errorf("the stale tab says:\n%s", got)
				}
				// Even when the button is enabled again by hand, the server refuses.
				run(t, a, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('button').forEach(b => b.disabled = false); document.querySelectorAll('form').forEach(f => delete f.dataset.sent)`))
			}
			run(t, a, chromedp.Click(chromedp.CSS("#approve")), heading("Already decided"))
			if got := text(t, a); !strings.Contains(got, "This request was declined by team@acme.") || !strings.Contains(got, "paid already") {
				t.Errorf("the stale tab's approval got:\n%s", got)
			}
			if paid, _ := w.Payments("alice"); paid != 0 {
				t.Errorf("the stale approval ran the payment %d times", paid)
			}
		})
	}
}

// TestAnotherOwnersLink: bob opens the link of alice's run: he sees a
// page that says nothing waits for him, nothing of alice's run.
func TestAnotherOwnersLink(t *testing.T) {
	w := world(t)
	id := w.Start(alice, "pay alice 5")
	w.Start(bob, "pay bob 7")
	ctx := tab(t, w, "beta:bob")
	if got := text(t, ctx); strings.Contains(got, id) || !strings.Contains(got, "p-bob") {
		t.Errorf("bob's list:\n%s", got)
	}
	run(t, ctx, chromedp.Navigate(runURL(w, id)), heading("Not found"))
	html := get(t, ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	for _, secret := range []string{"p-alice", "alice", "rgt1.", "rgf1."} {
		if strings.Contains(html, secret) {
			t.Errorf("bob's page for alice's run holds %q", secret)
		}
	}
}

// TestHostilePayload: a model's arguments, reason and question carrying
// script, an event handler and a javascript: URL are shown as text; no
// script runs, no dialog opens, nothing is a link; approving runs the
// write once.
func TestHostilePayload(t *testing.T) {
	w := world(t)
	post := w.Start(alice, "post hostile")
	ask := w.Start(alice, "ask hostile")
	ctx := tab(t, w, "acme:alice")
	var dialogs atomic.Int32
	if err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
			go func() { _, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{}) }()
		}
	}); err != nil {
		t.Fatal(err)
	}
	check := func(where string) {
		t.Helper()
		run(t, ctx, chromedp.Sleep(200*time.Millisecond))
		pwned := get(t, ctx, chromedp.Evaluate[int](`window.__pwned === undefined ? 0 : window.__pwned`))
		jsLinks := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('a[href^="javascript" i], [onerror], img').length`))
		if pwned != 0 || jsLinks != 0 || dialogs.Load() != 0 {
			t.Errorf("%s: window.__pwned = %d, javascript links, handlers or images = %d, dialogs = %d", where, pwned, jsLinks, dialogs.Load())
		}
	}
	check("the list")
	if got := text(t, ctx); !strings.Contains(got, inboxtest.Hostile[:20]) {
		t.Errorf("the list does not show the payload as text:\n%s", got)
	}
	run(t, ctx, chromedp.Navigate(runURL(w, post)), heading("Approve post_note?"))
	check("the approval")
	got := text(t, ctx)
	for _, want := range []string{inboxtest.Hostile, `"javascript:window.__pwned=3"`, `pay \u202e1000 EUR\u200b`, "please approve <script>"} {
		if !strings.Contains(got, want) {
			t.Errorf("the approval page does not show %q as text:\n%s", want, got)
		}
	}
	run(t, ctx, chromedp.Click(chromedp.CSS("#approve")), heading("no longer waits"))
	check("after approving")
	if n := w.Notes(); n != 1 {
		t.Errorf("post_note ran %d times; want 1", n)
	}
	run(t, ctx, chromedp.Navigate(runURL(w, ask)), heading("asks you a question"))
	check("the question")
}

// TestLiveList: an open list shows a new request by itself and says so to
// screen readers. The pages poll only every hour here: the update comes
// through the inbox's Server-Sent Events, woken by the loop's Live.
func TestLiveList(t *testing.T) {
	if root == nil {
		t.Skip("no Chromium")
	}
	w := inboxtest.New(t, &inboxtest.Options{Inbox: func(o *inbox.Options) { o.Poll = time.Hour }})
	ctx := tab(t, w, "acme:alice")
	if got := text(t, ctx); !strings.Contains(got, "Nothing waits for you") {
		t.Fatalf("the empty list:\n%s", got)
	}
	id := w.Start(alice, "pay alice 5")
	run(t, ctx, chromedp.WaitVisible(chromedp.CSS(`a[href="runs/`+id+`"]`)))
	live := get(t, ctx, chromedp.Text(chromedp.CSS("#live")))
	if live != "The list was updated: 1 request waits." {
		t.Errorf("the live region says %q", live)
	}
}

// TestViewerTimeZone: times are shown in the viewer's zone, not UTC.
func TestViewerTimeZone(t *testing.T) {
	w := world(t)
	id := w.Start(alice, "pay alice 5")
	p, err := w.Loop.Pending(context.Background(), id, react.WithOwner(alice))
	if err != nil {
		t.Fatal(err)
	}
	ctx := tab(t, w, "acme:alice", timeZone("Asia/Tokyo"), command(emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "en_US"}))
	run(t, ctx, chromedp.Navigate(runURL(w, id)), heading("Approve pay?"))
	shown := get(t, ctx, chromedp.Text(chromedp.CSS("dd time")))
	foot := get(t, ctx, chromedp.Text(chromedp.CSS("footer")))
	tokyo := p.Sealed.In(time.FixedZone("JST", 9*3600))
	if want := tokyo.Format("3:04:05"); !strings.Contains(shown, want) || !strings.Contains(shown, "GMT+9") {
		t.Errorf("the time shown is %q; want Tokyo's %s (GMT+9)", shown, want)
	}
	if !strings.Contains(foot, "Asia/Tokyo") {
		t.Errorf("the footer says %q", foot)
	}
}

// TestPhoneWidth: at 360 px nothing scrolls sideways and the buttons are
// large enough to touch; every field has a label.
func TestPhoneWidth(t *testing.T) {
	w := world(t)
	id := w.Start(alice, "post hostile")
	ctx := tab(t, w, "acme:alice", chromedp.EmulateViewport(360, 740, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	for _, u := range []string{w.URL("/"), runURL(w, id)} {
		run(t, ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("h1")))
		overflow := get(t, ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
		small := get(t, ctx, chromedp.Evaluate[int](`[...document.querySelectorAll('button')].filter(b => b.getBoundingClientRect().height < 44).length`))
		unlabelled := get(t, ctx, chromedp.Evaluate[int](`[...document.querySelectorAll('textarea, input:not([type=hidden]), select')].filter(e => !e.labels || e.labels.length === 0).length`))
		if overflow || small != 0 || unlabelled != 0 {
			t.Errorf("%s at 360 px: scrolls sideways %v, buttons under 44 px %d, fields without a label %d", u, overflow, small, unlabelled)
		}
	}
}

// TestScreenshots writes the list's and a run's screenshots when
// -screenshots names a directory (go test -run TestScreenshots
// -screenshots ../../docs).
func TestScreenshots(t *testing.T) {
	if *screenshots == "" {
		t.Skip("-screenshots not set")
	}
	w := world(t)
	id := w.Start(alice, "pay alice 120")
	w.Start(alice, "close an account")
	w.Start(react.Owner{Tenant: "acme", User: "carol"}, "pay northwind 1250")
	w.Start(alice, "pay twice bob 5 5000")
	ctx := tab(t, w, "acme:", chromedp.EmulateViewport(900, 700), timeZone("Europe/Berlin"))
	run(t, ctx, chromedp.Navigate(w.URL("/")), chromedp.WaitVisible(chromedp.CSS("h1")))
	list := get(t, ctx, chromedp.FullScreenshot(100))
	run(t, ctx, chromedp.Navigate(runURL(w, id)), heading("Approve pay?"))
	detail := get(t, ctx, chromedp.FullScreenshot(100))
	for name, b := range map[string][]byte{"inbox-list.png": list, "inbox-run.png": detail} {
		if err := os.WriteFile(filepath.Join(*screenshots, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
