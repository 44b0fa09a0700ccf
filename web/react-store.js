// react-store.js — what every hook's store shares: listeners, immutable
// snapshots for useSyncExternalStore, and disposal deferred by a macrotask,
// so that React's StrictMode double mount keeps one client (one
// connection, one sign-in window).
import { useEffect, useRef } from "react";

/** The base of the hooks' stores: listeners, snapshots, deferred disposal. */
export class Store {
  #listeners = new Set();
  #users = 0;
  #disposeTimer = 0;
  disposed = false;
  snapshot;

  constructor(initial) {
    this.snapshot = Object.freeze(initial);
  }

  subscribe = (fn) => {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  };

  getSnapshot = () => this.snapshot;

  set(patch) {
    if (this.disposed) return;
    this.snapshot = Object.freeze({ ...this.snapshot, ...patch });
    for (const fn of this.#listeners) fn();
  }

  /** A component mounted: start (once) or keep the object alive. */
  retain() {
    this.#users++;
    clearTimeout(this.#disposeTimer);
    this.#disposeTimer = 0;
    if (!this.started) {
      this.started = true;
      this.start();
    }
  }

  /** A component unmounted: dispose unless it mounts again right away. */
  release() {
    if (--this.#users > 0) return;
    clearTimeout(this.#disposeTimer);
    this.#disposeTimer = setTimeout(() => {
      if (this.#users > 0) return;
      this.disposed = true;
      this.#listeners.clear();
      this.dispose();
    }, 0);
  }
}

/** Keeps one store per hook instance, replaced when its key changes. */
export function useStore(key, make) {
  const ref = useRef(null);
  if (ref.current === null || ref.current.key !== key) ref.current = { key, store: make() };
  const store = ref.current.store;
  useEffect(() => {
    store.retain();
    return () => store.release();
  }, [store]);
  return store;
}

export const notReady = (what) => Promise.reject(Object.assign(new Error(`${what}: the client is not created yet (state "loading")`), { code: "invalid_argument" }));
