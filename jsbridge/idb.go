//go:build js && wasm

package jsbridge

import (
	"context"

	"github.com/hack-pad/safejs"
)

// AwaitEvents waits until target fires one of ok (resolving with
// target[result], when result is not empty) or one of fail (rejecting with
// target.error, or the event name). It suits IDBRequest ("success"/"error"),
// IDBTransaction ("complete"/"error","abort") and IDBOpenDBRequest. Listeners
// are added before it returns control to JavaScript, so call it right after
// the request is made.
func AwaitEvents(ctx context.Context, target Value, result string, ok []string, fail []string) (Value, error) {
	type outcome struct {
		v   Value
		err error
	}
	ch := make(chan outcome, 1)
	var funcs []safejs.Func
	defer func() {
		for _, f := range funcs {
			f.Release()
		}
	}()
	listen := func(name string, fn func() outcome) error {
		f, err := safejs.FuncOf(func(Value, []Value) any {
			select {
			case ch <- fn():
			default:
			}
			return nil
		})
		if err != nil {
			return err
		}
		funcs = append(funcs, f)
		_, err = target.Call("addEventListener", name, f)
		return err
	}
	for _, name := range ok {
		if err := listen(name, func() outcome {
			if result == "" {
				return outcome{v: Undefined()}
			}
			v, err := target.Get(result)
			return outcome{v: v, err: err}
		}); err != nil {
			return Undefined(), fromSafe(err)
		}
	}
	for _, name := range fail {
		name := name
		if err := listen(name, func() outcome {
			e, _ := target.Get("error")
			if e.IsNull() || e.IsUndefined() {
				return outcome{err: &JSError{Message: name}}
			}
			return outcome{err: FromJS(e)}
		}); err != nil {
			return Undefined(), fromSafe(err)
		}
	}
	select {
	case o := <-ch:
		return o.v, o.err
	case <-ctx.Done():
		return Undefined(), ctx.Err()
	}
}

// Bytes copies a Uint8Array (or ArrayBuffer) into Go.
func Bytes(v Value) ([]byte, error) {
	if ok, _ := v.InstanceOf(mustGlobal("ArrayBuffer")); ok {
		ctor := mustGlobal("Uint8Array")
		var err error
		if v, err = ctor.New(v); err != nil {
			return nil, fromSafe(err)
		}
	}
	n, err := v.Length()
	if err != nil {
		return nil, fromSafe(err)
	}
	b := make([]byte, n)
	if _, err := safejs.CopyBytesToGo(b, v); err != nil {
		return nil, fromSafe(err)
	}
	return b, nil
}

// Uint8Array copies b into a new Uint8Array.
func Uint8Array(b []byte) (Value, error) {
	a, err := mustGlobal("Uint8Array").New(len(b))
	if err != nil {
		return Undefined(), fromSafe(err)
	}
	if _, err := safejs.CopyBytesToJS(a, b); err != nil {
		return Undefined(), fromSafe(err)
	}
	return a, nil
}

func mustGlobal(name string) Value {
	v, _ := Global().Get(name)
	return v
}
