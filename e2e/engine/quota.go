package engine

import (
	"context"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// QuotaSetter is a Window whose engine can change an origin's storage
// quota for real, so that IndexedDB refuses writes with a
// QuotaExceededError as on a full disk. Chromium can (CDP
// Storage.overrideQuotaForOrigin); neither WebDriver BiDi nor classic
// WebDriver has such a command, so Firefox's and WebKit's windows are not
// QuotaSetters.
type QuotaSetter interface {
	// SetQuota sets the quota of origin (scheme://host:port) in this
	// window's storage to bytes.
	SetQuota(ctx context.Context, origin string, bytes float64) error
}

var _ QuotaSetter = (*cdpTab)(nil)

// SetQuota implements QuotaSetter.
func (w *cdpTab) SetQuota(ctx context.Context, origin string, bytes float64) error {
	return w.run(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, storage.OverrideQuotaForOrigin, storage.OverrideQuotaForOriginParams{Origin: origin, QuotaSize: &bytes})
		return err
	}))
}
