//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/hack-pad/safejs"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// Value is a JavaScript value.
type Value = safejs.Value

// Global returns the JavaScript global object.
func Global() Value { return safejs.Global() }

// Undefined returns the JavaScript undefined value.
func Undefined() Value { return safejs.Undefined() }

// Null returns the JavaScript null value.
func Null() Value { return safejs.Null() }

var (
	errorFactoryMu sync.RWMutex
	errorFactory   Value // (code, message, status) => MCPError, set by the loader
)

// SetErrorFactory sets the JavaScript function that builds MCPError values:
// (code: string, message: string, status: number, detail: string,
// rpcCode: number|undefined) => MCPError.
func SetErrorFactory(fn Value) {
	errorFactoryMu.Lock()
	defer errorFactoryMu.Unlock()
	errorFactory = fn
}

// ErrorValue turns err into an MCPError value with its docs/JSAPI.md code
// (default "protocol"); without a factory it is an Error with the same
// name, code and status properties.
func ErrorValue(err error) Value {
	code := mcperr.CodeOf(err, mcperr.Protocol)
	status := mcperr.StatusOf(err)
	msg, detail := mcperr.Present(err)
	var rpc any = Undefined()
	if c, ok := mcperr.RPCCodeOf(err); ok {
		rpc = float64(c)
	}
	errorFactoryMu.RLock()
	f := errorFactory
	errorFactoryMu.RUnlock()
	if f.Type() == safejs.TypeFunction {
		if v, e := f.Invoke(string(code), msg, status, detail, rpc); e == nil {
			return v
		}
	}
	ctor, _ := Global().Get("Error")
	v, e := ctor.New(msg)
	if e != nil {
		return Undefined()
	}
	_ = v.Set("name", "MCPError")
	_ = v.Set("code", string(code))
	_ = v.Set("detail", detail)
	if status != 0 {
		_ = v.Set("status", status)
	}
	return v
}

// JSError is a value JavaScript threw or rejected with, as a Go error. When
// it is an MCPError, its code is kept.
type JSError struct {
	Code    mcperr.Code // code of an MCPError, else ""
	Name    string      // the error's name ("QuotaExceededError", "VersionError"), when it has one
	Message string
}

func (e *JSError) Error() string { return e.Message }

// MCPErrorCode implements mcperr.Coder; an error without a code is
// "protocol".
func (e *JSError) MCPErrorCode() mcperr.Code {
	if e.Code == "" {
		return mcperr.Protocol
	}
	return e.Code
}

// FromJS turns a thrown or rejected JavaScript value into a *JSError.
func FromJS(v Value) error {
	msg := Stringify(v)
	if v.Type() == safejs.TypeObject {
		if m, err := v.Get("message"); err == nil && m.Type() == safejs.TypeString {
			msg, _ = m.String()
		}
	}
	e := &JSError{Message: msg}
	if v.Type() == safejs.TypeObject {
		if c, err := v.Get("code"); err == nil && c.Type() == safejs.TypeString {
			s, _ := c.String()
			e.Code = mcperr.Code(s)
		}
		if n, err := v.Get("name"); err == nil && n.Type() == safejs.TypeString {
			e.Name, _ = n.String()
		}
	}
	return e
}

// fromSafe converts an error from a safejs call (a JS exception) into a
// *JSError that keeps only its message (safejs does not give the thrown
// value back, so an MCPError's code is lost here; FromJS keeps it).
func fromSafe(err error) error {
	var se safejs.Error
	if errors.As(err, &se) {
		return &JSError{Message: se.Error()}
	}
	return err
}

// Stringify returns String(v), which never throws for primitives.
func Stringify(v Value) string {
	str, err := Global().Get("String")
	if err != nil {
		return "<value>"
	}
	s, err := str.Invoke(v)
	if err != nil {
		return "<value>"
	}
	out, _ := s.String()
	return out
}

// NewObject returns a new plain JavaScript object with the given properties.
func NewObject(props map[string]any) (Value, error) {
	ctor, err := Global().Get("Object")
	if err != nil {
		return Undefined(), err
	}
	obj, err := ctor.New()
	if err != nil {
		return Undefined(), err
	}
	for k, v := range props {
		if err := obj.Set(k, v); err != nil {
			return Undefined(), err
		}
	}
	return obj, nil
}

// panicError turns a recovered panic into an error; the module stays up.
// The stack goes to the console, not into the error message.
func panicError(r any) error {
	ConsoleError(fmt.Sprintf("mcp: recovered from a Go panic: %v\n%s", r, debug.Stack()))
	return mcperr.New(mcperr.Protocol, "mcp: internal error (a Go panic, please report it with the console log): %v", r)
}

// ConsoleError logs msg with console.error. Unlike writing to os.Stderr
// (an asynchronous file write under GOOS=js), it never blocks, so it is
// safe inside a JavaScript callback.
func ConsoleError(msg string) {
	if c, err := Global().Get("console"); err == nil {
		_, _ = c.Call("error", msg)
	}
}

// Func wraps fn as a JavaScript function. A panic in fn or an error it
// returns becomes an MCPError value returned to JavaScript (the loader
// throws it). fn runs on the JavaScript thread: it must not block.
func Func(fn func(args []Value) (any, error)) (safejs.Func, error) {
	return safejs.FuncOf(func(_ Value, args []Value) (ret any) {
		defer func() {
			if r := recover(); r != nil {
				ret = ErrorValue(panicError(r))
			}
		}()
		v, err := fn(args)
		if err != nil {
			return ErrorValue(err)
		}
		return v
	})
}

// Promise runs fn in a goroutine and returns a Promise of its result: a
// value JavaScript accepts (string, number, bool, nil, Value). An error or a
// panic rejects it with an MCPError.
func Promise(fn func() (any, error)) Value {
	var resolve, reject Value
	executor, err := safejs.FuncOf(func(_ Value, args []Value) any {
		resolve, reject = args[0], args[1]
		return nil
	})
	if err != nil {
		return Undefined()
	}
	defer executor.Release()
	ctor, _ := Global().Get("Promise")
	p, err := ctor.New(executor)
	if err != nil {
		return Undefined()
	}
	go func() {
		v, err := func() (v any, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = panicError(r)
				}
			}()
			return fn()
		}()
		if err != nil {
			_, _ = reject.Invoke(ErrorValue(err))
			return
		}
		if _, err := resolve.Invoke(v); err != nil {
			_, _ = reject.Invoke(ErrorValue(fmt.Errorf("mcp: cannot pass the result to JavaScript: %w", fromSafe(err))))
		}
	}()
	return p
}

// Await waits for a thenable (or a plain value) to settle. A rejection
// becomes a *JSError. It must not be called on the JavaScript thread.
func Await(ctx context.Context, v Value) (Value, error) {
	if v.Type() != safejs.TypeObject && v.Type() != safejs.TypeFunction {
		return v, nil
	}
	then, err := v.Get("then")
	if err != nil || then.Type() != safejs.TypeFunction {
		return v, nil
	}
	type result struct {
		v   Value
		err error
	}
	// The callbacks release themselves (and each other) when the promise
	// settles, even after ctx ended the wait: a late settle then finds live
	// functions, never "call to released function". A promise that never
	// settles keeps them.
	ch := make(chan result, 1)
	var onOK, onErr safejs.Func
	settle := func(r result) {
		ch <- r
		onOK.Release()
		onErr.Release()
	}
	onOK, err = safejs.FuncOf(func(_ Value, args []Value) any {
		settle(result{v: arg(args, 0)})
		return nil
	})
	if err != nil {
		return Undefined(), err
	}
	onErr, err = safejs.FuncOf(func(_ Value, args []Value) any {
		settle(result{err: FromJS(arg(args, 0))})
		return nil
	})
	if err != nil {
		onOK.Release()
		return Undefined(), err
	}
	if _, err := v.Call("then", onOK, onErr); err != nil {
		onOK.Release()
		onErr.Release()
		return Undefined(), fromSafe(err)
	}
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return Undefined(), ctx.Err()
	}
}

func arg(args []Value, i int) Value {
	if i < len(args) {
		return args[i]
	}
	return Undefined()
}

// Arg returns args[i], or undefined when absent.
func Arg(args []Value, i int) Value { return arg(args, i) }

// String returns v as a Go string, or an invalid_argument error naming what.
func String(v Value, what string) (string, error) {
	if v.Type() != safejs.TypeString {
		return "", mcperr.New(mcperr.InvalidArgument, "mcp: %s must be a string", what)
	}
	return v.String()
}

// IsFunction reports whether v is a function.
func IsFunction(v Value) bool { return v.Type() == safejs.TypeFunction }

// Call calls v(args...) and converts a thrown exception into an error.
func Call(v Value, args ...any) (Value, error) {
	r, err := v.Invoke(args...)
	if err != nil {
		return Undefined(), fromSafe(err)
	}
	return r, nil
}

// OnAbort calls fn once when signal (an AbortSignal, or undefined) aborts,
// at once if it already has. The returned release must be called when the
// operation ends.
func OnAbort(signal Value, fn func()) (release func(), err error) {
	if signal.IsUndefined() || signal.IsNull() {
		return func() {}, nil
	}
	aborted, err := signal.Get("aborted")
	if err != nil || aborted.Type() != safejs.TypeBoolean {
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: signal must be an AbortSignal")
	}
	if b, _ := aborted.Bool(); b {
		fn()
		return func() {}, nil
	}
	var once sync.Once
	cb, err := safejs.FuncOf(func(Value, []Value) any {
		once.Do(func() { go fn() })
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := signal.Call("addEventListener", "abort", cb); err != nil {
		cb.Release()
		return nil, mcperr.New(mcperr.InvalidArgument, "mcp: signal must be an AbortSignal")
	}
	return func() {
		_, _ = signal.Call("removeEventListener", "abort", cb)
		cb.Release()
	}, nil
}
