package e2e

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// TestNpmMeasure measures, with a cold HTTP cache, navigation → the
// React example's first "connected" (production build, the demo server
// without sign-in) against navigation → the plain demo page's ready (module
// loaded), five rounds each, alternating. It asserts nothing and runs only
// with MCPWASM_MEASURE=1: timings belong to reports, not to pass/fail.
func TestNpmMeasure(t *testing.T) {
	if os.Getenv("MCPWASM_MEASURE") == "" {
		t.Skip("set MCPWASM_MEASURE=1 to measure")
	}
	b := buildNpm(t)
	demo := newDemoEnv(t, false)
	app := newAppEnv(t, false, b.Prod)
	const readyAt = `new MutationObserver((_, o) => {
		if (document.body?.dataset.ready) { window.__readyAt = performance.now(); o.disconnect(); }
	}).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-ready"] });`
	demo.do("record ready", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: readyAt})
		return err
	}))
	cold := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.ClearBrowserCache, cdp.Empty{})
		return err
	})
	var demoMs, appMs []float64
	for range 5 {
		demo.do("clear the cache", cold)
		demo.do("open the demo page", chromedp.Navigate(demo.PageURL+"/"))
		waitApp(demo, "the demo page's ready", `window.__readyAt !== undefined`)
		v, _ := strconv.ParseFloat(demo.js(`window.__readyAt.toFixed(0)`), 64)
		demoMs = append(demoMs, v)
		app.do("clear the cache", cold)
		app.do("open the app", chromedp.Navigate(app.PageURL+"/?server=mcp2"))
		waitApp(app, "the hook's first connected", `window.__connectedAt !== undefined`)
		v, _ = strconv.ParseFloat(app.js(`window.__connectedAt.toFixed(0)`), 64)
		appMs = append(appMs, v)
	}
	slices.Sort(demoMs)
	slices.Sort(appMs)
	t.Logf("measure: navigation → demo page ready %v ms (median %.0f); navigation → React example's first connected %v ms (median %.0f); ratio of medians %.2f",
		demoMs, demoMs[2], appMs, appMs[2], appMs[2]/demoMs[2])
}
