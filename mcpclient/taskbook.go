package mcpclient

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"
)

// TaskStore persists the records of a [TaskBook]: one opaque value per
// key, sealed at rest by the implementation (they name sessions).
type TaskStore interface {
	PutTask(ctx context.Context, key string, data []byte) error
	DeleteTask(ctx context.Context, key string) error
	// ListTasks returns every record, in no order; one that cannot be
	// read is left out.
	ListTasks(ctx context.Context) ([][]byte, error)
}

// TaskBook keeps the tasks clients started and have not seen end, so that
// a later client of the same server (after a reload, in another tab,
// after the network came back) lists them ([Client.Tasks]) and follows
// them to their results ([Client.ResumeTask]). Its records live in Store
// when set, else in memory only. A nil *TaskBook keeps a client's tasks
// for the client's life. It is safe for concurrent use.
type TaskBook struct {
	Store TaskStore

	mu        sync.Mutex
	loaded    bool
	m         map[string]keptTask // by bookKey
	following map[string]bool     // the tasks a call of this runtime follows now
}

// keptTask is one record: what a later page needs to follow the task.
// Session is the Streamable HTTP session the task was created in: servers
// built on the TypeScript SDK keep a task only for its session, so a
// later client goes on in that session (see [adoption]).
type keptTask struct {
	Server        string       `json:"server"`
	ID            string       `json:"taskId"`
	Tool          string       `json:"tool"`
	Status        string       `json:"status"`
	StatusMessage string       `json:"statusMessage,omitempty"`
	PollInterval  float64      `json:"pollInterval,omitempty"`
	Created       time.Time    `json:"createdAt"`
	Expires       time.Time    `json:"expiresAt"`
	Session       *keptSession `json:"session,omitempty"`
	// Version is the protocol the task was created under: 2026-07-28's
	// are the Tasks extension's; "" is 2025-11-25's.
	Version string `json:"version,omitempty"`
}

// keptSession is the session a task ran in: its id, the protocol version
// it negotiated and the server's initialize result as it came.
type keptSession struct {
	ID      string          `json:"id"`
	Version string          `json:"version"`
	Init    json.RawMessage `json:"init"`
}

// TaskInfo is a kept task as [Client.Tasks] lists it.
type TaskInfo struct {
	TaskID        string     `json:"taskId"`
	Tool          string     `json:"tool"`
	Status        string     `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	ExpiresAt     *time.Time `json:"expiresAt,omitempty"` // nil: the server set no limit
}

func bookKey(server, id string) string { return server + " " + id }

// load reads the store once; a store that fails leaves the book in
// memory (the failure is the store's to report).
func (b *TaskBook) load(ctx context.Context) {
	b.mu.Lock()
	done := b.loaded
	b.mu.Unlock()
	if done {
		return
	}
	var all [][]byte
	if b.Store != nil {
		all, _ = b.Store.ListTasks(ctx)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.loaded {
		return
	}
	b.loaded = true
	if b.m == nil {
		b.m = map[string]keptTask{}
	}
	for _, data := range all {
		var t keptTask
		if json.Unmarshal(data, &t) == nil && t.Server != "" && t.ID != "" {
			if _, newer := b.m[bookKey(t.Server, t.ID)]; !newer {
				b.m[bookKey(t.Server, t.ID)] = t
			}
		}
	}
}

// put records t (again), in memory at once and in the store.
func (b *TaskBook) put(ctx context.Context, t keptTask) error {
	b.load(ctx)
	b.mu.Lock()
	b.m[bookKey(t.Server, t.ID)] = t
	b.mu.Unlock()
	if b.Store == nil {
		return nil
	}
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return b.Store.PutTask(context.WithoutCancel(ctx), bookKey(t.Server, t.ID), data)
}

// drop forgets the task; its result was delivered, or it ended.
func (b *TaskBook) drop(ctx context.Context, server, id string) {
	b.load(ctx)
	b.mu.Lock()
	delete(b.m, bookKey(server, id))
	b.mu.Unlock()
	if b.Store != nil {
		_ = b.Store.DeleteTask(context.WithoutCancel(ctx), bookKey(server, id))
	}
}

// list returns server's kept tasks, oldest first, dropping those past
// their expiry (the server may have deleted them and their results).
func (b *TaskBook) list(ctx context.Context, server string, now time.Time) []keptTask {
	b.load(ctx)
	b.mu.Lock()
	var out, expired []keptTask
	for _, t := range b.m {
		switch {
		case t.Server != server:
		case !t.Expires.IsZero() && now.After(t.Expires):
			expired = append(expired, t)
		default:
			out = append(out, t)
		}
	}
	b.mu.Unlock()
	for _, t := range expired {
		b.drop(ctx, t.Server, t.ID)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out
}

// get returns server's kept task id.
func (b *TaskBook) get(ctx context.Context, server, id string) (keptTask, bool) {
	b.load(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.m[bookKey(server, id)]
	return t, ok
}

// has reports whether server's task id is kept.
func (b *TaskBook) has(ctx context.Context, server, id string) bool {
	_, ok := b.get(ctx, server, id)
	return ok
}

// follow marks the task as followed by a call of this runtime; false
// when one already follows it. The returned func ends the mark.
func (b *TaskBook) follow(server, id string) (done func(), ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := bookKey(server, id)
	if b.following[k] {
		return nil, false
	}
	if b.following == nil {
		b.following = map[string]bool{}
	}
	b.following[k] = true
	return func() {
		b.mu.Lock()
		delete(b.following, k)
		b.mu.Unlock()
	}, true
}

// holds reports whether a kept task of server ran in session id.
func (b *TaskBook) holds(ctx context.Context, server, session string) bool {
	if session == "" {
		return false
	}
	for _, t := range b.list(ctx, server, time.Now()) {
		if t.Session != nil && t.Session.ID == session {
			return true
		}
	}
	return false
}

// adoptable returns the session of server's newest kept task that ran in
// one and that no call of this runtime follows, for a new client of that
// server to go on in; nil when there is none.
func (b *TaskBook) adoptable(ctx context.Context, server string) *keptSession {
	tasks := b.list(ctx, server, time.Now())
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(tasks) - 1; i >= 0; i-- {
		s := tasks[i].Session
		if s != nil && s.ID != "" && s.Version < protocol20260728 && !b.following[bookKey(server, tasks[i].ID)] {
			return s
		}
	}
	return nil
}
