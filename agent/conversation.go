package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/mcperr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConversationStore keeps conversations, each an opaque JSON document under
// its id. In the browser it is the grant store's database, sealed like the
// grants. Implementations must be safe for concurrent use.
type ConversationStore interface {
	GetConversation(ctx context.Context, id string) (data []byte, found bool, err error)
	PutConversation(ctx context.Context, id string, data []byte) error
	DeleteConversation(ctx context.Context, id string) error
	ListConversations(ctx context.Context) ([][]byte, error)
}

// Locker gives named mutual exclusion across everything that writes the
// same [ConversationStore] (in the browser, Web Locks across the origin's
// tabs); release must be called once.
type Locker interface {
	Lock(ctx context.Context, name string) (release func(), err error)
}

// Compact bounds a stored conversation: once the estimated tokens of its
// summary, messages and the new input pass MaxTokens, a run first replaces
// its oldest whole turns by a summary, keeping the newest turns that fit
// in half the budget with the input (all of them, when even the newest
// does not; the input itself is never summarized).
type Compact struct {
	// MaxTokens is the budget, estimated as bytes of JSON / 4 scaled by
	// the model's own counts once it reported usage (a model that counts
	// twice as many tokens as the estimate compacts at half the bytes):
	// positive and at most MaxConversationBytes/4.
	MaxTokens int
	// Summarize writes the new summary from the previous one ("" for
	// none) and the turns it replaces. Nil asks the agent's model.
	Summarize func(ctx context.Context, previous string, turns []Message) (string, error)
}

// Limits of a stored conversation.
const (
	MaxConversationIDLen    = 200     // bytes of a conversation's id
	MaxConversationTitleLen = 200     // bytes of its title
	MaxConversationBytes    = 4 << 20 // bytes of its stored JSON
)

// Conversation is a stored conversation: its messages (without the agent's
// system prompt), the summary of the turns compaction replaced, and the
// revision that every save increments, so that a save over another tab's
// newer write is refused instead of losing it.
type Conversation struct {
	ID             string    `json:"id"`
	Title          string    `json:"title"`
	Summary        string    `json:"summary,omitempty"`
	Messages       []Message `json:"messages"`
	Revision       int       `json:"revision"`
	CompactedTurns int       `json:"compactedTurns,omitempty"`
	// TokenScale is the model's tokens per [EstimateTokens] token, as its
	// last usage report in this conversation showed (0: none yet):
	// compaction counts in the model's tokens with it.
	TokenScale float64   `json:"tokenScale,omitempty"`
	CreatedAt  time.Time `json:"createdAt,omitzero"`
	UpdatedAt  time.Time `json:"updatedAt,omitzero"`
	// Views are the tool calls of Messages whose tool has a view (MCP
	// Apps), by call id: what a page needs to show each view again after
	// a reload.
	Views map[string]KeptView `json:"views,omitempty"`
}

// KeptView is what a stored conversation keeps of a tool call with a
// view: the view, and the server's whole result, which the view shows
// and the model never saw (it saw the result's text). A result over
// [MaxKeptViewResult] bytes is not kept, nor are the views of a
// conversation that would pass its size limit with them: such a view
// cannot be shown again.
type KeptView struct {
	App    ToolApp         `json:"app"`
	Result json.RawMessage `json:"result"`
}

// MaxKeptViewResult bounds the result a stored conversation keeps for a
// view (its JSON, in bytes).
const MaxKeptViewResult = 256 << 10

// keepView keeps the view of call id for a stored conversation, its result
// redacted of the agent's secrets.
func (r *run) keepView(id string, app ToolApp, res *mcp.CallToolResult) {
	data, err := json.Marshal(res)
	if err != nil || len(data) > MaxKeptViewResult {
		return
	}
	data = []byte(r.a.redact(string(data)))
	if !json.Valid(data) {
		return
	}
	r.viewsMu.Lock()
	defer r.viewsMu.Unlock()
	if r.views == nil {
		r.views = map[string]KeptView{}
	}
	r.views[id] = KeptView{App: app, Result: data}
}

// keptViews are the views of kept and this run's, of the tool calls msgs
// still hold (compaction drops the others), or nil.
func (r *run) keptViews(kept map[string]KeptView, msgs []Message) map[string]KeptView {
	r.viewsMu.Lock()
	defer r.viewsMu.Unlock()
	var out map[string]KeptView
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			v, ok := r.views[tc.ID]
			if !ok {
				v, ok = kept[tc.ID]
			}
			if !ok {
				continue
			}
			if out == nil {
				out = map[string]KeptView{}
			}
			out[tc.ID] = v
		}
	}
	return out
}

// ConversationInfo describes a stored conversation without its messages.
type ConversationInfo struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Messages  int       `json:"messages"`
	Revision  int       `json:"revision"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// CompactionEvent says a run replaced the conversation's oldest turns by a
// summary before asking the model.
type CompactionEvent struct {
	Turns        int `json:"turns"`        // turns replaced now
	TokensBefore int `json:"tokensBefore"` // estimate before, with the input
	TokensAfter  int `json:"tokensAfter"`  // estimate after
	// Scale is the model's tokens per estimated token the figures are
	// scaled by ([Conversation.TokenScale]); 0: plain estimates, the
	// model reported no usage yet.
	Scale float64 `json:"scale,omitempty"`
}

// EventCompaction is the type of a [CompactionEvent].
const EventCompaction = "compaction"

// summaryPrefix introduces the summary in the message the model gets.
const summaryPrefix = "Summary of the earlier part of this conversation (older messages were replaced by it):\n"

// conversations is an Agent's state for stored conversations.
type conversations struct {
	mu        sync.Mutex
	running   map[string]bool               // ids with a run in this Agent
	approvals map[string]*catalog.Approvals // each conversation's "always" and "server" answers
}

// approvalsOf returns conversation id's scope of approval answers.
func (a *Agent) approvalsOf(id string) *catalog.Approvals {
	a.convs.mu.Lock()
	defer a.convs.mu.Unlock()
	if a.convs.approvals == nil {
		a.convs.approvals = map[string]*catalog.Approvals{}
	}
	ap, ok := a.convs.approvals[id]
	if !ok {
		ap = new(catalog.Approvals)
		a.convs.approvals[id] = ap
	}
	return ap
}

func (a *Agent) convStore() (ConversationStore, error) {
	if a.cfg.Conversations == nil {
		return nil, mcperr.New(mcperr.InvalidArgument, "agent: this agent has no conversation store (Config.Conversations)")
	}
	return a.cfg.Conversations, nil
}

func checkConversationID(id string) error {
	if id == "" || len(id) > MaxConversationIDLen || !utf8.ValidString(id) {
		return mcperr.New(mcperr.InvalidArgument, "agent: a conversation id must be a non-empty string of at most %d bytes", MaxConversationIDLen)
	}
	return nil
}

// lock takes the conversation's lock when the agent has a Locker.
func (a *Agent) lock(ctx context.Context, id string) (func(), error) {
	if a.cfg.Locker == nil {
		return func() {}, nil
	}
	release, err := a.cfg.Locker.Lock(ctx, "mcpwasm-conversation:"+id)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.CodeOf(err, mcperr.Storage), err, fmt.Sprintf("agent: cannot lock conversation %q", id))
	}
	return release, nil
}

// load reads conversation id; a missing one is new and empty (revision 0).
func (a *Agent) load(ctx context.Context, id string) (*Conversation, error) {
	st, err := a.convStore()
	if err != nil {
		return nil, err
	}
	if err := checkConversationID(id); err != nil {
		return nil, err
	}
	data, found, err := st.GetConversation(ctx, id)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.CodeOf(err, mcperr.Storage), err, fmt.Sprintf("agent: cannot read conversation %q", id))
	}
	if !found {
		return &Conversation{ID: id, Messages: []Message{}}, nil
	}
	c, err := decodeConversation(data)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.Storage, err, fmt.Sprintf("agent: conversation %q is stored in a form this version cannot read; delete it", id))
	}
	if c.ID != id {
		return nil, mcperr.New(mcperr.Storage, "agent: the record of conversation %q names another conversation; delete it", id)
	}
	return c, nil
}

// storedHeader is a stored conversation without its messages decoded: what
// a save checks and a listing shows.
type storedHeader struct {
	ID        string            `json:"id"`
	Title     string            `json:"title"`
	Messages  []json.RawMessage `json:"messages"`
	Revision  int               `json:"revision"`
	CreatedAt time.Time         `json:"createdAt"`
	UpdatedAt time.Time         `json:"updatedAt"`
}

// header reads the stored header of conversation id; found is false when
// none is stored.
func (a *Agent) header(ctx context.Context, st ConversationStore, id string) (h storedHeader, found bool, err error) {
	data, found, err := st.GetConversation(ctx, id)
	if err != nil {
		return h, false, mcperr.Wrap(mcperr.CodeOf(err, mcperr.Storage), err, fmt.Sprintf("agent: cannot read conversation %q", id))
	}
	if !found {
		return h, false, nil
	}
	if err := json.Unmarshal(data, &h); err != nil || h.ID != id {
		return h, false, mcperr.New(mcperr.Storage, "agent: conversation %q is stored in a form this version cannot read; delete it", id)
	}
	return h, true, nil
}

func decodeConversation(data []byte) (*Conversation, error) {
	var c Conversation
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	if c.Messages == nil {
		c.Messages = []Message{}
	}
	return &c, validateStored(c.Messages)
}

// validateStored checks stored messages as a run's input would be.
func validateStored(msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	return validateInput(msgs)
}

// save writes c as revision base+1, under the conversation's lock, after
// checking that the stored revision is still base. It redacts the
// agent's secrets from the messages first.
func (a *Agent) save(ctx context.Context, c *Conversation, base int) error {
	st, err := a.convStore()
	if err != nil {
		return err
	}
	release, err := a.lock(ctx, c.ID)
	if err != nil {
		return err
	}
	defer release()
	cur, found, err := a.header(ctx, st, c.ID)
	if err != nil {
		return err
	}
	switch {
	case base > 0 && !found:
		return mcperr.New(mcperr.Storage, "agent: conversation %q was deleted while this turn ran; start it again to keep this turn", c.ID)
	case cur.Revision != base || base > 0 && !cur.CreatedAt.Equal(c.CreatedAt):
		return mcperr.New(mcperr.Storage, "agent: conversation %q changed in another tab or run (revision %d, this one started from %d); load it again and retry", c.ID, cur.Revision, base)
	}
	next := *c
	if found {
		next.Title = cur.Title // a rename meanwhile stays
		next.CreatedAt = cur.CreatedAt
	}
	next.Messages = a.redactMessages(c.Messages)
	next.Summary = a.redact(c.Summary)
	next.Revision = base + 1
	next.UpdatedAt = time.Now().UTC()
	if next.CreatedAt.IsZero() {
		next.CreatedAt = next.UpdatedAt
	}
	data, err := json.Marshal(&next)
	if err != nil {
		return mcperr.Wrap(mcperr.InvalidArgument, err, fmt.Sprintf("agent: cannot encode conversation %q", c.ID))
	}
	if len(data) > MaxConversationBytes && next.Views != nil {
		// The messages come first: without its views the conversation
		// goes on, only its views cannot be shown again.
		next.Views = nil
		if data, err = json.Marshal(&next); err != nil {
			return mcperr.Wrap(mcperr.InvalidArgument, err, fmt.Sprintf("agent: cannot encode conversation %q", c.ID))
		}
	}
	if len(data) > MaxConversationBytes {
		return mcperr.New(mcperr.Storage, "agent: conversation %q would be %d bytes, over the %d-byte limit of a stored conversation; set compact: {maxTokens} or start a new conversation", c.ID, len(data), MaxConversationBytes)
	}
	if err := st.PutConversation(ctx, c.ID, data); err != nil {
		return mcperr.Wrap(mcperr.CodeOf(err, mcperr.Storage), err, fmt.Sprintf("agent: cannot save conversation %q", c.ID))
	}
	*c = next
	return nil
}

// redact removes the agent's secrets (Config.Secrets) from text.
func (a *Agent) redact(text string) string {
	for _, s := range a.cfg.Secrets {
		text = s.Redact(text)
	}
	return text
}

func (a *Agent) redactMessages(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		m.Content = a.redact(m.Content)
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				tc.Function.Arguments = a.redact(tc.Function.Arguments)
				calls[j] = tc
			}
			m.ToolCalls = calls
		}
		m.ProviderState = nil
		out[i] = m
	}
	return out
}

// Conversation returns the stored conversation id, or a new empty one
// (revision 0, not stored until a run or a rename saves it).
func (a *Agent) Conversation(ctx context.Context, id string) (*Conversation, error) {
	return a.load(ctx, id)
}

// Conversations lists the stored conversations, the most recently updated
// first. A record that cannot be read is left out.
func (a *Agent) Conversations(ctx context.Context) ([]ConversationInfo, error) {
	st, err := a.convStore()
	if err != nil {
		return nil, err
	}
	all, err := st.ListConversations(ctx)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.CodeOf(err, mcperr.Storage), err, "agent: cannot list the conversations")
	}
	out := make([]ConversationInfo, 0, len(all))
	for _, data := range all {
		var h storedHeader
		if json.Unmarshal(data, &h) != nil || checkConversationID(h.ID) != nil {
			continue
		}
		out = append(out, ConversationInfo{ID: h.ID, Title: h.Title, Messages: len(h.Messages), Revision: h.Revision, CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].UpdatedAt.Equal(out[j].UpdatedAt) {
			return out[i].UpdatedAt.After(out[j].UpdatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// RenameConversation sets the title of conversation id (storing it if it
// was new) and returns it. It does not change the revision, so a turn
// running meanwhile is not refused, and its saves keep the title.
func (a *Agent) RenameConversation(ctx context.Context, id, title string) (*Conversation, error) {
	if len(title) > MaxConversationTitleLen || !utf8.ValidString(title) {
		return nil, mcperr.New(mcperr.InvalidArgument, "agent: a conversation title must be text of at most %d bytes", MaxConversationTitleLen)
	}
	st, err := a.convStore()
	if err != nil {
		return nil, err
	}
	if err := checkConversationID(id); err != nil {
		return nil, err
	}
	release, err := a.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer release()
	c, err := a.load(ctx, id)
	if err != nil {
		return nil, err
	}
	c.Title = title
	c.UpdatedAt = time.Now().UTC()
	if c.CreatedAt.IsZero() {
		c.CreatedAt = c.UpdatedAt // stored now, still revision 0
	}
	data, err := json.Marshal(c)
	if err != nil {
		return nil, mcperr.Wrap(mcperr.InvalidArgument, err, fmt.Sprintf("agent: cannot encode conversation %q", id))
	}
	// The revision stays: a title is not part of what a turn reads, so a
	// turn running meanwhile saves on, keeping the new title.
	if err := st.PutConversation(ctx, id, data); err != nil {
		return nil, mcperr.Wrap(mcperr.CodeOf(err, mcperr.Storage), err, fmt.Sprintf("agent: cannot save conversation %q", id))
	}
	return c, nil
}

// DeleteConversation deletes conversation id; deleting one that is not
// stored is not an error. A run of it in this Agent fails its next save.
func (a *Agent) DeleteConversation(ctx context.Context, id string) error {
	st, err := a.convStore()
	if err != nil {
		return err
	}
	if err := checkConversationID(id); err != nil {
		return err
	}
	release, err := a.lock(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	if err := st.DeleteConversation(ctx, id); err != nil {
		return mcperr.Wrap(mcperr.CodeOf(err, mcperr.Storage), err, fmt.Sprintf("agent: cannot delete conversation %q", id))
	}
	a.convs.mu.Lock()
	delete(a.convs.approvals, id)
	a.convs.mu.Unlock()
	return nil
}

// ConversationResult is the outcome of [Agent.RunConversation]: the run's
// result, whose Messages are the stored conversation's, and the
// conversation as saved.
type ConversationResult struct {
	Result
	Conversation *Conversation `json:"conversation"`
}

// RunConversation runs a turn of stored conversation id: it loads the
// conversation, compacts it first when Config.Compact's budget is passed
// (a compaction event), runs the model on its summary, its messages and
// input, and saves the conversation after every step, so a reload finds
// every finished step (an aborted run is saved with its calls answered as
// aborted). A save is refused, ending the run with a "storage" error, when
// another tab or run saved the conversation since this run loaded it. One
// run at a time per conversation in an Agent. The host's "always" and
// "server" approval answers hold for the conversation's later runs in
// this Agent, not for its other conversations.
func (a *Agent) RunConversation(ctx context.Context, id string, input []Message, onEvent func(Event)) (ConversationResult, error) {
	r := &run{a: a, onEvent: onEvent, approvals: a.approvalsOf(id), conv: id}
	res, err := r.conversation(ctx, id, input)
	if err != nil {
		if ctx.Err() != nil {
			cause := context.Cause(ctx)
			if r.saveErr != nil {
				cause = fmt.Errorf("%w; the conversation could not be saved: %w", cause, r.saveErr)
			}
			err = mcperr.Wrap(mcperr.CodeOf(ctx.Err(), mcperr.Aborted), cause, "agent: the run was aborted")
		}
		r.emit(EventError, &ErrorEvent{Code: string(mcperr.CodeOf(err, mcperr.Protocol)), Message: err.Error()})
	}
	return res, err
}

// checkSize refuses, before the model is asked, a turn whose conversation
// could not be stored.
func checkSize(id, summary string, msgs []Message) error {
	if n := EstimateTokens(summary, msgs) * 4; n > MaxConversationBytes {
		return mcperr.New(mcperr.Storage, "agent: conversation %q is about %d bytes with this input, over the %d-byte limit of a stored conversation; set compact: {maxTokens} or start a new conversation", id, n, MaxConversationBytes)
	}
	return nil
}

func (a *Agent) claim(id string) error {
	a.convs.mu.Lock()
	defer a.convs.mu.Unlock()
	if a.convs.running[id] {
		return mcperr.New(mcperr.InvalidArgument, "agent: conversation %q already has a run going; wait for it or stop it", id)
	}
	if a.convs.running == nil {
		a.convs.running = map[string]bool{}
	}
	a.convs.running[id] = true
	return nil
}

func (a *Agent) unclaim(id string) {
	a.convs.mu.Lock()
	delete(a.convs.running, id)
	a.convs.mu.Unlock()
}

func (r *run) conversation(ctx context.Context, id string, input []Message) (ConversationResult, error) {
	a := r.a
	if err := validateInput(input); err != nil {
		return ConversationResult{}, err
	}
	c, err := a.load(ctx, id)
	if err != nil {
		return ConversationResult{}, err
	}
	if err := a.claim(id); err != nil {
		return ConversationResult{Conversation: c}, err
	}
	defer a.unclaim(id)
	if err := r.compact(ctx, c, input); err != nil {
		return ConversationResult{Conversation: c}, err
	}
	var prefix []Message
	if c.Summary != "" {
		prefix = []Message{{Role: RoleSystem, Content: summaryPrefix + c.Summary}}
	}
	start := len(prefix)
	saved := -1 // messages stored by this run's last save
	store := func(msgs []Message) error {
		if len(msgs)-start == saved {
			return nil
		}
		next := *c
		next.Messages = append([]Message(nil), msgs[start:]...)
		next.Views = r.keptViews(c.Views, next.Messages)
		if r.scale > 0 {
			next.TokenScale = r.scale
		}
		// Not the run's context: an aborted run is saved too.
		if err := a.save(context.WithoutCancel(ctx), &next, c.Revision); err != nil {
			return err
		}
		*c = next
		saved = len(msgs) - start
		return nil
	}
	r.afterStep = func(msgs []Message) error {
		r.saveErr = store(msgs)
		return r.saveErr
	}
	conv := append(append(append([]Message(nil), prefix...), c.Messages...), input...)
	if err := checkSize(c.ID, c.Summary, conv); err != nil {
		return ConversationResult{Conversation: c}, err
	}
	base := len(conv)
	res, err := r.loop(ctx, conv)
	if err != nil && r.saveErr == nil && len(res.Messages) > base {
		// A stopped or failed turn keeps its finished steps (a stop's
		// calls answered as aborted).
		if r.saveErr = store(res.Messages); r.saveErr != nil {
			err = fmt.Errorf("%w (and the conversation could not be saved: %w)", err, r.saveErr)
		}
	}
	if len(res.Messages) >= start {
		res.Messages = res.Messages[start:]
	}
	return ConversationResult{Result: res, Conversation: c}, err
}

// turnStarts returns the index of each message that starts a turn (a user
// message); messages before the first user message belong to the first
// turn.
func turnStarts(msgs []Message) []int {
	var starts []int
	for i, m := range msgs {
		if m.Role == RoleUser || i == 0 {
			starts = append(starts, i)
		}
	}
	return starts
}

// Bounds of a plausible scale of the model's tokens to [EstimateTokens]'s:
// a report outside them is taken for a provider's mistake and not used.
const (
	minTokenScale = 0.25
	maxTokenScale = 4
)

// measure records, when the model reported the context of its response to
// conv (with tools) as msg, how many of its tokens an [EstimateTokens]
// token was: compaction scales its estimates by it.
func (r *run) measure(conv []Message, tools json.RawMessage, msg Message) {
	if r.stepContext <= 0 || r.afterStep == nil {
		return // no report, or no stored conversation to keep the scale in
	}
	est := EstimateTokens("", append(append([]Message(nil), conv...), msg)) + len(tools)/4
	if est <= 0 {
		return
	}
	if s := float64(r.stepContext) / float64(est); s >= minTokenScale && s <= maxTokenScale {
		r.scale = s
	}
}

// EstimateTokens estimates the tokens of msgs and a summary as bytes of
// their JSON / 4, the measure of [Compact.MaxTokens] (scaled by the
// model's own counts once it reported usage: [Conversation.TokenScale]).
func EstimateTokens(summary string, msgs []Message) int {
	n := len(summary)
	if len(msgs) > 0 {
		b, _ := json.Marshal(msgs)
		n += len(b)
	}
	return n / 4
}

// compact replaces c's oldest turns by a summary when c and input pass
// the budget, and saves c.
func (r *run) compact(ctx context.Context, c *Conversation, input []Message) error {
	cfg := r.a.cfg.Compact
	if cfg == nil || cfg.MaxTokens <= 0 || len(c.Messages) == 0 {
		return nil
	}
	scale := c.TokenScale
	if scale < minTokenScale || scale > maxTokenScale {
		scale = 1
	}
	estimate := func(summary string, msgs []Message) int {
		return int(float64(EstimateTokens(summary, msgs)) * scale)
	}
	all := append(append([]Message(nil), c.Messages...), input...)
	before := estimate(c.Summary, all)
	if before <= cfg.MaxTokens {
		return nil
	}
	// Keep the newest turns that fit in half the budget with the input.
	starts := turnStarts(c.Messages)
	cut := len(c.Messages)
	for i := len(starts) - 1; i >= 0; i-- {
		if estimate("", append(append([]Message(nil), c.Messages[starts[i]:]...), input...)) > cfg.MaxTokens/2 {
			break
		}
		cut = starts[i]
	}
	if cut == 0 {
		return nil // every stored turn fits: nothing to replace
	}
	turns := 0
	for _, s := range starts {
		if s < cut {
			turns++
		}
	}
	summarize := cfg.Summarize
	if summarize == nil {
		summarize = r.a.modelSummary
	}
	summary, err := summarize(ctx, c.Summary, c.Messages[:cut])
	if err != nil {
		return fmt.Errorf("agent: compacting conversation %q: %w", c.ID, err)
	}
	if strings.TrimSpace(summary) == "" {
		return mcperr.New(mcperr.Protocol, "agent: compacting conversation %q: the summary is empty", c.ID)
	}
	next := *c
	next.Summary = summary
	next.Messages = append([]Message(nil), c.Messages[cut:]...)
	next.Views = r.keptViews(c.Views, next.Messages)
	next.CompactedTurns += turns
	if err := r.a.save(ctx, &next, c.Revision); err != nil {
		return err
	}
	*c = next
	r.emit(EventCompaction, &CompactionEvent{Turns: turns, TokensBefore: before,
		TokensAfter: estimate(c.Summary, append(append([]Message(nil), c.Messages...), input...)), Scale: c.TokenScale})
	return nil
}

// summaryInstructions is the system prompt of a summary the model writes.
const summaryInstructions = "You compact a conversation between a user and an assistant that uses tools. " +
	"Write a concise summary for the assistant's own later use: what the user asked and decided, facts and tool results that matter, and what is still open. " +
	"Keep names, numbers and identifiers exactly. Answer with the summary only."

// modelSummary asks the agent's model for the summary, without tools.
func (a *Agent) modelSummary(ctx context.Context, previous string, turns []Message) (string, error) {
	var b strings.Builder
	if previous != "" {
		b.WriteString("Summary so far:\n" + previous + "\n\n")
	}
	b.WriteString("Messages to add to it:\n")
	for _, m := range turns {
		switch {
		case m.Role == RoleTool:
			fmt.Fprintf(&b, "tool result: %s\n", m.Content)
		case len(m.ToolCalls) > 0:
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, "assistant called %s(%s)\n", tc.Function.Name, tc.Function.Arguments)
			}
			if m.Content != "" {
				fmt.Fprintf(&b, "assistant: %s\n", m.Content)
			}
		default:
			fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
		}
	}
	msg, err := a.cfg.Model.Generate(ctx, Request{Messages: []Message{
		{Role: RoleSystem, Content: summaryInstructions},
		{Role: RoleUser, Content: b.String()},
	}}, nil)
	if err != nil {
		return "", err
	}
	return msg.Content, nil
}
