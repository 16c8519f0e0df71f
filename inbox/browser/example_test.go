package browser_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/chromedp/chromedp"

	"github.com/reactguard/reactguard/inbox/browser"
)

// Start Chromium, open a page in a tab of its own and read its title.
func ExampleNew() {
	ctx, cancel, err := browser.New(context.Background())
	if errors.Is(err, browser.ErrNoBrowser) {
		fmt.Println("install Chromium: apt-get install chromium")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cancel()
	tab, closeTab := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext()) // its own cookies
	defer closeTab()
	if err := chromedp.Do(tab, chromedp.Navigate("data:text/html,<title>inbox</title>")); err != nil {
		fmt.Println(err)
		return
	}
	title, err := chromedp.Run(tab, chromedp.Title())
	fmt.Println(title, err)
}
