// Package browser starts Debian's Chromium headless for tests that drive
// a page in a real browser with chromedp, on a machine whose network is
// closed. Its own tests are the approvals inbox's browser tests (package
// github.com/reactguard/reactguard/inbox): list, open, approve, decline,
// answer, a double click, a stale tab, another owner's link, a hostile
// argument payload, live updates, time zones, phone width and keyboard
// use, each against the inbox served by net/http/httptest.
//
//	ctx, cancel, err := browser.New(context.Background())
//	if errors.Is(err, browser.ErrNoBrowser) { … } // apt-get install chromium
//	defer cancel()
//	err = chromedp.Run(ctx, chromedp.Navigate(url), chromedp.Click("#approve"))
//
// The tests skip, with one line saying why, when no Chromium is installed;
// with CI=true they fail instead.
package browser
