//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func eval(t *testing.T, src string) Value {
	t.Helper()
	fn, err := Global().Get("Function")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fn.New("return (" + src + ")")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Call(f)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return v
}

func TestPromiseResolvesAndRejects(t *testing.T) {
	v, err := Await(ctxT(t), Promise(func() (any, error) { return "ok", nil }))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := v.String(); s != "ok" {
		t.Errorf("resolved %q; want ok", s)
	}

	_, err = Await(ctxT(t), Promise(func() (any, error) {
		return nil, mcperr.New(mcperr.InvalidArgument, "bad input")
	}))
	var je *JSError
	if !errors.As(err, &je) || je.MCPErrorCode() != mcperr.InvalidArgument || !strings.Contains(strings.ToLower(je.Message), "bad input") {
		t.Errorf("rejection = %#v; want invalid_argument 'bad input'", err)
	}
}

func TestPanicBecomesRejectionAndModuleLives(t *testing.T) {
	_, err := Await(ctxT(t), Promise(func() (any, error) {
		panic("async boom")
	}))
	if err == nil || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("panic gave %v; want a rejection that says so", err)
	}
	// Still alive.
	if _, err := Await(ctxT(t), Promise(func() (any, error) { return 1, nil })); err != nil {
		t.Fatal(err)
	}

	f, err := Func(func([]Value) (any, error) { panic("sync boom") })
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	v, err := Call(f.Value())
	if err != nil {
		t.Fatalf("a panicking Func threw into JS: %v", err)
	}
	if msg := Stringify(v); !strings.Contains(msg, "sync boom") {
		t.Errorf("Func panic returned %q; want an error value naming the panic", msg)
	}
}

func TestAwaitJSRejectionKeepsCode(t *testing.T) {
	p := eval(t, `Promise.reject(Object.assign(new Error("nope"), { code: "declined" }))`)
	_, err := Await(ctxT(t), p)
	if got := mcperr.CodeOf(err, ""); got != mcperr.Declined {
		t.Errorf("code = %q (%v); want declined", got, err)
	}
	// Non-Error rejection values become messages, not crashes.
	_, err = Await(ctxT(t), eval(t, `Promise.reject(Symbol("odd"))`))
	if err == nil || !strings.Contains(err.Error(), "Symbol(odd)") {
		t.Errorf("symbol rejection = %v", err)
	}
	// Plain values pass through.
	v, err := Await(ctxT(t), eval(t, `42`))
	if n, _ := v.Int(); err != nil || n != 42 {
		t.Errorf("Await(42) = %v, %v", n, err)
	}
}

func TestAwaitHonoursContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := Await(ctx, eval(t, `new Promise(() => {})`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Await on a never-settling promise = %v; want deadline exceeded", err)
	}
}

func TestOnAbort(t *testing.T) {
	ac := eval(t, `new AbortController()`)
	signal, _ := ac.Get("signal")
	fired := make(chan struct{})
	release, err := OnAbort(signal, func() { close(fired) })
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := ac.Call("abort"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("abort did not reach Go")
	}

	already := eval(t, `AbortSignal.abort()`)
	called := false
	if _, err := OnAbort(already, func() { called = true }); err != nil || !called {
		t.Errorf("already-aborted signal: called=%v err=%v", called, err)
	}
	if _, err := OnAbort(eval(t, `"stop"`), func() {}); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
		t.Errorf("OnAbort(string) = %v; want invalid_argument", err)
	}
}

func TestErrorValueUsesFactory(t *testing.T) {
	SetErrorFactory(eval(t, `(code, message, status) => Object.assign(new Error(message), { name: "MCPError", code, status })`))
	defer SetErrorFactory(Undefined())
	v := ErrorValue(&mcperr.Error{Code: mcperr.HTTP, Status: 404, Msg: "not found"})
	code, _ := v.Get("code")
	status, _ := v.Get("status")
	if s, _ := code.String(); s != "http" {
		t.Errorf("code = %q; want http", s)
	}
	if n, _ := status.Int(); n != 404 {
		t.Errorf("status = %d; want 404", n)
	}
}

// TestLateSettleAfterTimeout: a promise that settles after Await gave up
// must not call a released function (that throws in JavaScript).
func TestLateSettleAfterTimeout(t *testing.T) {
	eval(t, `(() => { globalThis.consoleErrors = []; const orig = console.error; console.error = (...a) => { consoleErrors.push(a.join(" ")); orig(...a); }; })()`)
	p := eval(t, `(() => { let r; const p = new Promise((res) => { r = res; }); globalThis.lateResolve = r; return p; })()`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Await(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Await = %v; want deadline exceeded", err)
	}
	if _, err := Call(eval(t, `globalThis.lateResolve`), "late"); err != nil {
		t.Fatal(err)
	}
	// Let the late settle run; a released callback would make the runtime
	// throw ("call to released function").
	if _, err := Await(ctxT(t), eval(t, `Promise.resolve().then(() => "after")`)); err != nil {
		t.Fatalf("the runtime is unhappy after a late settle: %v", err)
	}
	if errs := Stringify(eval(t, `consoleErrors.join("\n")`)); strings.Contains(errs, "released function") {
		t.Errorf("a late settle called a released callback: %s", errs)
	}
}

// TestFromJSKeepsTheErrorName: a DOMException's name (what IndexedDB and
// WebCrypto failures are told apart by) survives into the Go error.
func TestFromJSKeepsTheErrorName(t *testing.T) {
	ctor, err := Global().Get("DOMException")
	if err != nil || ctor.IsUndefined() {
		t.Fatal("this runtime has no DOMException")
	}
	v, err := ctor.New("the quota was exceeded", "QuotaExceededError")
	if err != nil {
		t.Fatal(err)
	}
	var je *JSError
	if !errors.As(FromJS(v), &je) || je.Name != "QuotaExceededError" || je.Message != "the quota was exceeded" {
		t.Errorf("FromJS(DOMException) = %#v; want name QuotaExceededError and its message", je)
	}
}
