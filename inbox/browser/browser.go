package browser

import (
	"context"
	"errors"
	"os"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// ErrNoBrowser is returned by [Path] and [New] when no Chromium is found.
var ErrNoBrowser = errors.New("browser: no Chromium found (install Debian's chromium package, or set CHROME_PATH)")

// Path returns the Chromium to start: $CHROME_PATH when set, else the
// first of chromium, chromium-browser, google-chrome and
// google-chrome-stable on $PATH; [ErrNoBrowser] when there is none.
func Path() (string, error) {
	if p := os.Getenv("CHROME_PATH"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", errors.Join(ErrNoBrowser, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// Flags returns the allocator options that start Chromium at path
// headless with the empty profile dir: no sandbox (tests run as root in
// CI), no GPU, and none of the background connections (QUIC, component
// updates, sync, first-run pages) that a machine on a closed network
// refuses, which would otherwise slow or fail every start.
func Flags(path, dir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1024, 768),
	}
}

// New starts a headless Chromium with a new empty profile and returns the
// context of its first tab (open more with chromedp.NewContext, isolated
// ones with chromedp.WithNewBrowserContext). cancel stops the browser,
// waits for it to exit and removes the profile.
func New(ctx context.Context) (context.Context, context.CancelFunc, error) {
	path, err := Path()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "inbox-chromium-")
	if err != nil {
		return nil, nil, err
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, Flags(path, dir)...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil { // start it now: a failure is the caller's to see
		cancelBrowser()
		cancelAlloc()
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	return bctx, func() {
		cancelBrowser()
		cancelAlloc()
		_ = os.RemoveAll(dir)
	}, nil
}
