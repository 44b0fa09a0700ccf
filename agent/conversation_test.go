package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/catalog"
	"github.com/mcpwasm/mcpwasm/demo/model"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// memConversations is an [agent.ConversationStore] in memory, shared by
// the agents of a test as tabs share IndexedDB.
type memConversations struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memConversations) GetConversation(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	return b, ok, nil
}

func (s *memConversations) PutConversation(_ context.Context, id string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[id] = append([]byte(nil), data...)
	return nil
}

func (s *memConversations) DeleteConversation(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

func (s *memConversations) ListConversations(context.Context) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	for _, b := range s.m {
		out = append(out, b)
	}
	return out, nil
}

// requests records the chat requests the stand-in model gets.
type requests struct {
	mu   sync.Mutex
	list []string
}

func (r *requests) add(b []byte) { r.mu.Lock(); r.list = append(r.list, string(b)); r.mu.Unlock() }
func (r *requests) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.list...)
}

// TestConversationResumes: a second agent on the same store (a reloaded
// page) continues the stored conversation: the model gets the first turn
// with the second, and the store holds both, saved step by step.
func TestConversationResumes(t *testing.T) {
	store := &memConversations{}
	reqs := &requests{}
	e := newEnv(t, model.Options{OnRequest: reqs.add}, newFakeTools(addTool(), echoTool()), nil)
	first := e.agent(t, func(c *agent.Config) { c.Conversations = store })
	ctx := context.Background()

	res, err := first.RunConversation(ctx, "chat-1", []agent.Message{{Role: agent.RoleUser, Content: "add 2 and 40"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Results: 2 + 40 = 42" || res.Conversation.Revision != 2 || len(res.Messages) != 4 {
		t.Fatalf("first turn: text %q, revision %d, %d messages; want the sum, revision 2 (a save per step), 4 messages", res.Text, res.Conversation.Revision, len(res.Messages))
	}

	second := e.agent(t, func(c *agent.Config) { c.Conversations = store })
	res, err = second.RunConversation(ctx, "chat-1", []agent.Message{{Role: agent.RoleUser, Content: "echo again"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := reqs.all()
	if last := all[len(all)-1]; !strings.Contains(last, "add 2 and 40") || !strings.Contains(last, "echo again") {
		t.Errorf("the resumed turn's last model request lacks the first turn: %s", last)
	}
	c, err := second.Conversation(ctx, "chat-1")
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range c.Messages {
		if m.Role == agent.RoleUser {
			users = append(users, m.Content)
		}
	}
	if strings.Join(users, "|") != "add 2 and 40|echo again" || len(c.Messages) != 8 || c.Revision != 4 {
		t.Errorf("stored: users %q, %d messages, revision %d; want both turns (8 messages), revision 4", users, len(c.Messages), c.Revision)
	}
}

// TestConversationCompacts: past its budget, a conversation's older turns
// become the model's summary (a compaction event); the newest turn stays
// whole, and the model gets the summary as a system message.
func TestConversationCompacts(t *testing.T) {
	store := &memConversations{}
	reqs := &requests{}
	e := newEnv(t, model.Options{OnRequest: reqs.add}, newFakeTools(addTool(), echoTool()), nil)
	a := e.agent(t, func(c *agent.Config) {
		c.Conversations = store
		c.Compact = &agent.Compact{MaxTokens: 200}
	})
	ctx := context.Background()
	var (
		res       agent.ConversationResult
		compacted *agent.CompactionEvent
		turns     int
	)
	for _, text := range []string{"add 1 and 2", "echo remember the blue door", "add 3 and 4", "echo last"} {
		rec := &recorder{}
		var err error
		if res, err = a.RunConversation(ctx, "long", []agent.Message{{Role: agent.RoleUser, Content: text}}, rec.on); err != nil {
			t.Fatal(err)
		}
		if ev, ok := rec.last(agent.EventCompaction).(*agent.CompactionEvent); ok {
			if ev.Turns < 1 || ev.TokensAfter >= ev.TokensBefore || ev.TokensBefore <= 200 || ev.TokensAfter > 200 {
				t.Errorf("compaction event %+v; want turns replaced, from over the budget 200 to within it", ev)
			}
			if types := rec.types(); types[0] != agent.EventCompaction {
				t.Errorf("events %v; want the compaction first", types)
			}
			compacted = ev
			turns += ev.Turns
		}
	}
	if compacted == nil {
		t.Fatalf("four turns (about 320 tokens) within a 200-token budget never compacted")
	}
	c := res.Conversation
	if !strings.Contains(c.Summary, `"add 1 and 2"`) || c.CompactedTurns != turns {
		t.Errorf("summary %q, compacted turns %d; want the first turn kept in the summary, %d turns", c.Summary, c.CompactedTurns, turns)
	}
	if c.Messages[0].Role != agent.RoleUser || strings.Contains(c.Messages[0].Content, "add 1 and 2") {
		t.Errorf("stored messages start with %+v; want a whole newer turn", c.Messages[0])
	}
	if len(c.Messages) >= 16 {
		t.Errorf("%d messages stored; want fewer than the 16 of four whole turns", len(c.Messages))
	}
	all := reqs.all()
	var last struct {
		Messages []agent.Message `json:"messages"`
	}
	if err := json.Unmarshal([]byte(all[len(all)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if m := last.Messages[0]; m.Role != agent.RoleSystem || !strings.Contains(m.Content, c.Summary) {
		t.Errorf("the model's first message is %+v; want the summary as a system message", m)
	}
}

// TestConversationSummaryByThePage: Compact.Summarize writes the summary;
// its error ends the run before the model is asked, and nothing is lost.
func TestConversationSummaryByThePage(t *testing.T) {
	store := &memConversations{}
	reqs := &requests{}
	e := newEnv(t, model.Options{OnRequest: reqs.add}, newFakeTools(echoTool()), nil)
	fail := true
	a := e.agent(t, func(c *agent.Config) {
		c.Conversations = store
		c.Compact = &agent.Compact{MaxTokens: 120, Summarize: func(_ context.Context, prev string, turns []agent.Message) (string, error) {
			if fail {
				return "", mcperr.New(mcperr.Protocol, "summarizer down")
			}
			return "the user echoed " + turns[0].Content, nil
		}}
	})
	ctx := context.Background()
	for _, text := range []string{"echo one two three four five", "echo six seven eight nine ten"} {
		if _, err := a.RunConversation(ctx, "p", []agent.Message{{Role: agent.RoleUser, Content: text}}, nil); err != nil && !fail {
			t.Fatal(err)
		}
		fail = false
	}
	before, _ := a.Conversation(ctx, "p")
	fail = true
	n := len(reqs.all())
	if _, err := a.RunConversation(ctx, "p", []agent.Message{{Role: agent.RoleUser, Content: "echo x"}}, nil); err == nil || !strings.Contains(err.Error(), "summarizer down") {
		t.Fatalf("run with a failing summarizer: %v; want its error", err)
	}
	after, _ := a.Conversation(ctx, "p")
	if len(reqs.all()) != n || after.Revision != before.Revision {
		t.Errorf("a failed compaction still asked the model or changed the conversation")
	}
	fail = false
	res, err := a.RunConversation(ctx, "p", []agent.Message{{Role: agent.RoleUser, Content: "echo y"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Conversation.Summary, "the user echoed echo one") {
		t.Errorf("summary %q; want the page's", res.Conversation.Summary)
	}
}

// gatedRun starts a turn of conversation id in a, whose tool call waits
// until release is closed; it returns when the call has started, and the
// run's error arrives on the channel.
func gatedRun(t *testing.T, a *agent.Agent, id string, started chan struct{}, input []agent.Message) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := a.RunConversation(context.Background(), id, input, nil)
		done <- err
	}()
	<-started
	return done
}

func gatedEnv(t *testing.T, reqs *requests) (*env, chan struct{}, chan struct{}) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	gated := &fakeTool{server: "work", tool: "slow", run: func(ctx context.Context, _ map[string]any, _ catalog.CallOptions) (string, bool, error) {
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-ctx.Done():
			return "", false, ctx.Err()
		}
		return "finished", false, nil
	}}
	opts := model.Options{}
	if reqs != nil {
		opts.OnRequest = reqs.add
	}
	return newEnv(t, opts, newFakeTools(gated, echoTool()), nil), started, release
}

// TestConversationRefusesAStaleSave: a turn whose conversation another
// tab's turn saved meanwhile fails with a storage error naming the
// conflict, and the other tab's turn stays.
func TestConversationRefusesAStaleSave(t *testing.T) {
	store := &memConversations{}
	e, started, release := gatedEnv(t, nil)
	tabA := e.agent(t, func(c *agent.Config) { c.Conversations = store })
	tabB := e.agent(t, func(c *agent.Config) { c.Conversations = store })
	done := gatedRun(t, tabA, "shared", started, []agent.Message{{Role: agent.RoleUser, Content: "slow"}})
	if _, err := tabB.RunConversation(context.Background(), "shared", []agent.Message{{Role: agent.RoleUser, Content: "echo from B"}}, nil); err != nil {
		t.Fatal(err)
	}
	close(release)
	err := <-done
	if mcperr.CodeOf(err, "") != mcperr.Storage || !strings.Contains(err.Error(), "changed in another tab") || strings.Count(err.Error(), "changed in another tab") != 1 {
		t.Fatalf("the stale run ended with %v; want one storage error about the other tab", err)
	}
	c, _ := tabB.Conversation(context.Background(), "shared")
	if len(c.Messages) != 4 || c.Messages[0].Content != "echo from B" {
		t.Errorf("stored %+v; want B's turn kept", c.Messages)
	}
}

// TestConversationRenameDuringARun: a rename while a turn runs (a
// sidebar) neither fails the turn nor is undone by its saves.
func TestConversationRenameDuringARun(t *testing.T) {
	store := &memConversations{}
	e, started, release := gatedEnv(t, nil)
	tabA := e.agent(t, func(c *agent.Config) { c.Conversations = store })
	tabB := e.agent(t, func(c *agent.Config) { c.Conversations = store })
	done := gatedRun(t, tabA, "shared", started, []agent.Message{{Role: agent.RoleUser, Content: "slow"}})
	if _, err := tabB.RenameConversation(context.Background(), "shared", "renamed in B"); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the turn failed after a rename: %v", err)
	}
	c, _ := tabB.Conversation(context.Background(), "shared")
	if c.Title != "renamed in B" || len(c.Messages) != 4 {
		t.Errorf("title %q, %d messages; want B's title and A's whole turn", c.Title, len(c.Messages))
	}
}

// TestConversationDeletedAndRecreatedDuringARun: a turn that started
// before the conversation was deleted and made again under the same id
// (with as many saves) does not overwrite the new one.
func TestConversationDeletedAndRecreatedDuringARun(t *testing.T) {
	store := &memConversations{}
	e, started, release := gatedEnv(t, nil)
	tabA := e.agent(t, func(c *agent.Config) { c.Conversations = store })
	tabB := e.agent(t, func(c *agent.Config) { c.Conversations = store })
	ctx := context.Background()
	if _, err := tabA.RunConversation(ctx, "c", []agent.Message{{Role: agent.RoleUser, Content: "echo one"}}, nil); err != nil {
		t.Fatal(err)
	}
	done := gatedRun(t, tabA, "c", started, []agent.Message{{Role: agent.RoleUser, Content: "slow"}})
	if err := tabB.DeleteConversation(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := tabB.RunConversation(ctx, "c", []agent.Message{{Role: agent.RoleUser, Content: "echo new"}}, nil); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; mcperr.CodeOf(err, "") != mcperr.Storage {
		t.Fatalf("the turn begun before the delete ended with %v; want a storage error", err)
	}
	c, _ := tabB.Conversation(ctx, "c")
	if len(c.Messages) == 0 || c.Messages[0].Content != "echo new" {
		t.Errorf("stored %+v; want only the new conversation", c.Messages)
	}
}

// TestConversationStoppedKeepsItsSteps: a turn with a two-message input,
// stopped in its tool call, is stored with its input, the call, and the
// call answered as aborted.
func TestConversationStoppedKeepsItsSteps(t *testing.T) {
	e, started, _ := gatedEnv(t, nil)
	a := e.agent(t, func(c *agent.Config) { c.Conversations = &memConversations{} })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.RunConversation(ctx, "s", []agent.Message{{Role: agent.RoleUser, Content: "hello"}, {Role: agent.RoleUser, Content: "slow"}}, nil)
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; mcperr.CodeOf(err, "") != mcperr.Aborted {
		t.Fatalf("stopped turn: %v; want aborted", err)
	}
	c, _ := a.Conversation(context.Background(), "s")
	if len(c.Messages) != 4 || c.Messages[2].Role != agent.RoleAssistant || c.Messages[3].Role != agent.RoleTool || !strings.Contains(c.Messages[3].Content, "aborted") {
		t.Errorf("stored %+v; want the input, the call and its aborted answer", c.Messages)
	}
}

// TestConversationOneRunAtATime: a second run of a conversation while one
// runs in the same agent is refused.
func TestConversationOneRunAtATime(t *testing.T) {
	started := make(chan struct{}, 1)
	e := newEnv(t, model.Options{}, newFakeTools(slowTool(started)), nil)
	a := e.agent(t, func(c *agent.Config) { c.Conversations = &memConversations{} })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = a.RunConversation(ctx, "c", []agent.Message{{Role: agent.RoleUser, Content: "slow"}}, nil)
	}()
	<-started
	_, err := a.RunConversation(context.Background(), "c", []agent.Message{{Role: agent.RoleUser, Content: "hi"}}, nil)
	if mcperr.CodeOf(err, "") != mcperr.InvalidArgument || !strings.Contains(err.Error(), "already has a run") {
		t.Errorf("second run: %v; want invalid_argument", err)
	}
}

// TestConversationKeepsNoSecret: the model's API key, echoed by a tool
// and by the model, is redacted from the stored messages.
func TestConversationKeepsNoSecret(t *testing.T) {
	store := &memConversations{}
	e := newEnv(t, model.Options{}, newFakeTools(echoTool()), nil)
	a := e.agent(t, func(c *agent.Config) {
		c.Conversations = store
		c.Secrets = []agent.Secret{agent.NewSecret(testKey)}
	})
	if _, err := a.RunConversation(context.Background(), "s", []agent.Message{{Role: agent.RoleUser, Content: "echo " + testKey}}, nil); err != nil {
		t.Fatal(err)
	}
	raw, _, _ := store.GetConversation(context.Background(), "s")
	if strings.Contains(string(raw), testKey) || strings.Contains(string(raw), testKey[8:20]) || !strings.Contains(string(raw), agent.Redacted) {
		t.Errorf("stored conversation holds the key: %s", raw)
	}
}

// TestConversationListRenameDelete: the stored conversations, newest
// first; a rename stores a new one; a delete removes it; bad ids and
// titles are refused.
func TestConversationListRenameDelete(t *testing.T) {
	e := newEnv(t, model.Options{}, newFakeTools(echoTool()), nil)
	a := e.agent(t, func(c *agent.Config) { c.Conversations = &memConversations{} })
	ctx := context.Background()
	if _, err := a.RunConversation(ctx, "a", []agent.Message{{Role: agent.RoleUser, Content: "echo hi"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RenameConversation(ctx, "b", "Second"); err != nil {
		t.Fatal(err)
	}
	list, err := a.Conversations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "b" || list[0].Title != "Second" || list[1].ID != "a" || list[1].Messages != 4 {
		t.Errorf("list = %+v; want b (renamed last) then a (4 messages)", list)
	}
	if err := a.DeleteConversation(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if list, _ = a.Conversations(ctx); len(list) != 1 {
		t.Errorf("after delete: %+v", list)
	}
	if c, _ := a.Conversation(ctx, "a"); c.Revision != 0 || len(c.Messages) != 0 {
		t.Errorf("a deleted conversation reads as %+v; want new", c)
	}
	if _, err := a.Conversation(ctx, ""); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
		t.Errorf("empty id: %v", err)
	}
	if _, err := a.RenameConversation(ctx, "b", strings.Repeat("x", 201)); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
		t.Errorf("long title: %v", err)
	}
	for _, bad := range []int{-1, agent.MaxConversationBytes/4 + 1} {
		if _, err := agent.New(agent.Config{Model: e.llm, Compact: &agent.Compact{MaxTokens: bad}}); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
			t.Errorf("compact.maxTokens %d: %v; want invalid_argument", bad, err)
		}
	}
	if c, _ := a.Conversation(ctx, "never-stored"); c != nil {
		if b, _ := json.Marshal(c); strings.Contains(string(b), "createdAt") || strings.Contains(string(b), "0001") {
			t.Errorf("a new conversation reads as %s; want no dates until stored", b)
		}
	}
	noStore := e.agent(t, nil)
	if _, err := noStore.Conversations(ctx); mcperr.CodeOf(err, "") != mcperr.InvalidArgument {
		t.Errorf("without a store: %v", err)
	}
}

// A stored conversation is its own approval scope: the host's "always"
// and "server" answers hold across its runs, not in the agent's other
// conversations or plain runs.
func TestConversationApprovalScope(t *testing.T) {
	echo, scopesOf := scopeTool()
	e := newEnv(t, model.Options{}, newFakeTools(echo), nil)
	a := e.agent(t, func(c *agent.Config) { c.Conversations = &memConversations{} })
	ctx := context.Background()
	for _, id := range []string{"a", "a", "b"} {
		if _, err := a.RunConversation(ctx, id, []agent.Message{{Role: agent.RoleUser, Content: "echo hi"}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.RunText(ctx, "echo hi", nil); err != nil {
		t.Fatal(err)
	}
	scopes := scopesOf()
	if len(scopes) != 4 || scopes[0] == nil || scopes[0] != scopes[1] || scopes[2] == scopes[0] || scopes[3] == scopes[0] || scopes[3] == scopes[2] {
		t.Errorf("approval scopes of conversation a twice, b, then a plain run = %p; want a's twice, then two others", scopes)
	}
}

// doubleCounter answers every request with a fixed text and reports the
// context as twice [agent.EstimateTokens] of the request and answer (a
// tokenizer denser than 4 bytes a token), or nothing when silent.
type doubleCounter struct{ silent bool }

func (d doubleCounter) Generate(ctx context.Context, req agent.Request, text func(string)) (agent.Message, error) {
	return d.Stream(ctx, req, agent.Stream{Text: text})
}

func (d doubleCounter) Stream(_ context.Context, req agent.Request, s agent.Stream) (agent.Message, error) {
	msg := agent.Message{Role: agent.RoleAssistant, Content: "noted: " + strings.Repeat("x", 80)}
	if !d.silent && s.Usage != nil {
		est := agent.EstimateTokens("", append(append([]agent.Message(nil), req.Messages...), msg)) + len(req.Tools)/4
		s.Usage(agent.Usage{InputTokens: 2 * est, OutputTokens: 0})
	}
	return msg, nil
}

// TestCompactionCountsInTheModelsTokens: a model whose usage shows twice
// the estimated tokens makes a conversation compact at half the bytes, and
// the compaction event says by which scale; the same conversation with a
// model that reports no usage stays whole.
func TestCompactionCountsInTheModelsTokens(t *testing.T) {
	for _, silent := range []bool{false, true} {
		store := &memConversations{}
		var compacted *agent.CompactionEvent
		a, err := agent.New(agent.Config{Model: doubleCounter{silent: silent}, Conversations: store,
			Compact: &agent.Compact{MaxTokens: 200, Summarize: func(context.Context, string, []agent.Message) (string, error) { return "earlier turns", nil }},
			OnEvent: func(ev agent.Event) {
				if c, ok := ev.Data.(*agent.CompactionEvent); ok {
					compacted = c
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		// Three turns of about 40 estimated tokens each: 120, within 200
		// by the estimate, 240 in the model's tokens.
		for _, text := range []string{"one", "two", "three", "four"} {
			if _, err := a.RunConversation(ctx, "c", []agent.Message{{Role: agent.RoleUser, Content: text}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		c, _ := a.Conversation(ctx, "c")
		switch {
		case !silent && (compacted == nil || compacted.Scale < 1.9 || compacted.Scale > 2.1 || compacted.TokensBefore <= 200):
			t.Errorf("model counting double: compaction %+v, stored scale %v; want a compaction at scale 2 from over 200 tokens", compacted, c.TokenScale)
		case silent && (compacted != nil || c.TokenScale != 0 || c.CompactedTurns != 0):
			t.Errorf("model without usage: compaction %+v, scale %v; want none (the estimate is within 200)", compacted, c.TokenScale)
		}
	}
}

// TestConversationKeepsItsViews: a stored conversation keeps, per tool
// call whose tool has a view, the view (with the stateKey its storage is
// kept under) and the server's whole result (what only the view shows),
// so a reloaded page can show the view again; a
// call compacted away takes its view with it, and a call without a view
// keeps none.
func TestConversationKeepsItsViews(t *testing.T) {
	store := &memConversations{}
	echo := echoTool()
	echo.view = "ui://text/echo.html"
	e := newEnv(t, model.Options{}, newFakeTools(addTool(), echo), nil)
	newAgent := func(compact *agent.Compact) *agent.Agent {
		return e.agent(t, func(c *agent.Config) { c.Conversations = store; c.Compact = compact })
	}
	ctx := context.Background()
	if _, err := newAgent(nil).RunConversation(ctx, "v", []agent.Message{{Role: agent.RoleUser, Content: "echo the blue door and add 1 and 2"}}, nil); err != nil {
		t.Fatal(err)
	}
	// A reload: another agent reads what the first stored.
	c, err := newAgent(nil).Conversation(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	echoCall := ""
	for _, m := range c.Messages {
		for _, tc := range m.ToolCalls {
			if tc.Function.Name == "text_echo" {
				echoCall = tc.ID
			}
		}
	}
	if echoCall == "" || len(c.Views) != 1 {
		t.Fatalf("stored views %v, echo's call %q; want the one echo call's view (add has none)", c.Views, echoCall)
	}
	v := c.Views[echoCall]
	if want := (agent.ToolApp{ServerID: "text", Tool: "echo", ResourceURI: "ui://text/echo.html", StateKey: "conversation:v/" + echoCall}); v.App != want {
		t.Errorf("the kept view is %+v; want %+v", v.App, want)
	}
	if !strings.Contains(string(v.Result), `"structuredContent":{"shown":"the blue door"}`) {
		t.Errorf("the kept result is %s; want the server's whole result with what only the view shows", v.Result)
	}

	// Later turns compact the first away: its view goes with it.
	a := newAgent(&agent.Compact{MaxTokens: 200})
	for _, text := range []string{"echo second", "add 3 and 4", "echo third", "echo last"} {
		if _, err := a.RunConversation(ctx, "v", []agent.Message{{Role: agent.RoleUser, Content: text}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err = a.Conversation(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if c.CompactedTurns == 0 {
		t.Fatal("five turns within a 200-token budget never compacted")
	}
	calls := map[string]bool{}
	for _, m := range c.Messages {
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = tc.Function.Name == "text_echo"
		}
	}
	if _, ok := c.Views[echoCall]; ok {
		t.Errorf("the first turn was compacted away, its view is still kept")
	}
	for id, isEcho := range calls {
		if _, ok := c.Views[id]; ok != isEcho {
			t.Errorf("call %s (echo: %v) has a kept view: %v", id, isEcho, ok)
		}
	}
}

// TestViewStateKeysOfAConversationShareItsPrefixOnly: the prefix of one
// conversation's views begins none of another's, whatever the ids hold.
func TestViewStateKeysOfAConversationShareItsPrefixOnly(t *testing.T) {
	ids := []string{"a", "a/b", "a%2Fb", "a/", "ab", "conversation:a"}
	for _, x := range ids {
		for _, y := range ids {
			if got := strings.HasPrefix(agent.ViewStateKey(y, "call_1"), agent.ViewStatePrefix(x)); got != (x == y) {
				t.Errorf("the key of %q's view starts with %q's prefix: %v", y, x, got)
			}
		}
	}
}
