package catalog

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds Debian's headless-capable Chromium (.ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (.ci/run installs Debian's chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

// TestBrowser drives the page in headless Chromium: the listing, search
// as you type, a skill's page and its install line. The screenshot of the
// skill's page is kept with go test -artifacts.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	srv := newTestServer(t, "")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		// Root (CI) cannot use Chromium's sandbox.
		chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1000, 800),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#hits li`)),
	))
	listing, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#hits`)))
	check(err)
	// Typing filters the list without a page load.
	check(chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#q`), "stamp"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#hits li').length === 1 && document.querySelector('#hits a').textContent === 'stamp'`),
	))
	filtered, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#hits`)))
	check(err)
	check(chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#hits a`)),
		chromedp.WaitVisible(chromedp.CSS(`.install code`)),
	))
	install, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`.install code`)))
	check(err)
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	check(err)
	if !strings.Contains(listing, "pdf") || !strings.Contains(listing, "stamp") {
		t.Errorf("listing %q", listing)
	}
	if strings.Contains(filtered, "Fill PDF forms") {
		t.Errorf("typing 'stamp' left %q", filtered)
	}
	if install != "agent skill add oci://127.0.0.1:5000/team/stamp:1.0.0" {
		t.Errorf("install line %q", install)
	}
	p := filepath.Join(t.ArtifactDir(), "skill-page.png")
	if err := os.WriteFile(p, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}
