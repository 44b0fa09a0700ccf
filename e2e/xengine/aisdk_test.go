package xengine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwasm/mcpwasm/devkit/npmapp"
)

var (
	aiOnce  sync.Once
	aiBuild string // examples/ai-sdk's production build, from the packed npm package
	aiErr   error
)

// aiSDKApp is examples/ai-sdk built from the packed npm package: the one
// under MCPWASM_E2E_APP (ai-sdk/prod), else built now (once per test
// binary).
func aiSDKApp(t *testing.T) string {
	t.Helper()
	aiOnce.Do(func() {
		if appDir != "" {
			aiBuild = filepath.Join(appDir, "ai-sdk", "prod")
			return
		}
		dir, err := os.MkdirTemp("", "xengine-ai-sdk-")
		if err != nil {
			aiErr = err
			return
		}
		t.Logf("building the AI SDK example app from the packed npm package (set MCPWASM_E2E_APP to reuse a build)")
		var b *npmapp.Build
		if b, aiErr = npmapp.MakeExample(repo, webDir, dir, "ai-sdk", false); aiErr == nil {
			aiBuild = b.Prod
		}
	})
	if aiErr != nil {
		t.Fatalf("building the AI SDK example app: %v", aiErr)
	}
	return aiBuild
}

// aiTool is what the AI SDK example's chat shows of a tool call.
type aiTool struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	Error  string `json:"error"`
	Result string `json:"result"`
}

// aiTurn is what the chat shows of its last assistant message.
type aiTurn struct {
	Status string   `json:"status"`
	Users  int      `json:"users"`
	Text   string   `json:"text"`
	Tools  []aiTool `json:"tools"`
	Error  string   `json:"error"`
}

func (w *world) aiTurn() aiTurn {
	w.t.Helper()
	var c aiTurn
	_ = w.win.Eval(w.ctx, `(() => {
		const li = [...document.querySelectorAll('#messages li[data-role="assistant"]')].at(-1);
		return {
			status: document.querySelector("#chat")?.dataset.status ?? "",
			users: document.querySelectorAll('#messages li[data-role="user"]').length,
			text: li ? [...li.querySelectorAll('[data-part="text"]')].map((e) => e.textContent).join("") : "",
			tools: li ? [...li.querySelectorAll('[data-part="tool"]')].map((e) => ({ name: e.dataset.name, state: e.dataset.state, error: e.dataset.error, result: e.querySelector(".result")?.textContent ?? "" })) : [],
			error: document.querySelector("#chat-error")?.textContent ?? "",
		};
	})()`, &c)
	return c
}

// aiSay clicks the chat's suggestion that sends text, and waits for the
// turn it starts to end with text from the model after the tool's result.
func (w *world) aiSay(text string, users int, answer string) aiTurn {
	w.t.Helper()
	w.chatSay(text)
	if answer != "" {
		w.waitFor("the approval question", func() bool {
			var asked bool
			_ = w.win.Eval(w.ctx, `document.querySelector("#approval") !== null`, &asked)
			return asked
		})
		if err := w.win.Click(w.ctx, answer); err != nil {
			w.t.Fatalf("clicking %s: %v", answer, err)
		}
		w.waitFor("the question answered", func() bool {
			var open bool
			_ = w.win.Eval(w.ctx, `document.querySelector("#approval") !== null`, &open)
			return !open
		})
	}
	var c aiTurn
	defer func() {
		if w.t.Failed() {
			w.t.Logf("turn %d (%s) showed %+v", users, text, c)
		}
	}()
	w.waitFor(fmt.Sprintf("turn %d (%s) to end", users, text), func() bool {
		c = w.aiTurn()
		if c.Error != "" {
			w.t.Fatalf("turn %d (%s): the chat shows the error %q (tools %+v)", users, text, c.Error, c.Tools)
		}
		return c.Users == users && c.Status == "ready" && c.Text != ""
	})
	if len(c.Tools) != 1 {
		w.t.Fatalf("turn %d (%s) shows tool calls %+v; want one", users, text, c.Tools)
	}
	return c
}

// TestAISDKChat drives the AI SDK example (examples/ai-sdk, built from the
// packed npm package with ai and @ai-sdk/react pinned): useChat over a
// ToolLoopAgent in the page whose model is the AI SDK's own mock and whose
// tools are mcpwasm/ai's toolsFromCatalog over the demo notes server. The
// mock's tool call reaches the server and its result shows in the chat; a
// call the approve callback refuses (the person presses Deny) shows the
// honest refusal, and the server never got it (its notes stay empty);
// a Stop while the question is open withdraws it, and that call never
// reaches the server either; a model's bad arguments are error results;
// "Allow for this chat" ("always") holds for the tool's next call.
func TestAISDKChat(t *testing.T) {
	eitherRuntime(t)
	w := appWorldOf(t, aiSDKApp(t))
	w.navigate(w.win, w.PageURL+"/")
	w.waitFor("the catalog's tools in the chat", func() bool {
		var names string
		_ = w.win.Eval(w.ctx, `document.querySelector("#tool-names")?.textContent ?? ""`, &names)
		return strings.Contains(names, "notes_reverse")
	})

	c := w.aiSay("reverse hello", 1, "")
	if tool := c.Tools[0]; tool.Name != "notes_reverse" || tool.State != "output-available" || tool.Error != "false" || tool.Result != "olleh" {
		t.Errorf("reverse hello shows the call %+v; want notes_reverse output-available with the server's olleh", tool)
	}
	if c.Text != "The tool answered: olleh" {
		t.Errorf("after reverse hello the model says %q; want it to have read the server's olleh", c.Text)
	}

	// notes_note_add is not read-only: the app's approve asks, Deny refuses.
	c = w.aiSay("note buy milk", 2, "#deny")
	const refusal = "The user refused to run notes_note_add. Do not retry it; tell the user."
	if tool := c.Tools[0]; tool.Name != "notes_note_add" || tool.Error != "true" || tool.Result != refusal {
		t.Errorf("a denied note shows the call %+v; want notes_note_add as an error result %q", tool, refusal)
	}
	if c.Text != "The tool did not run: "+refusal {
		t.Errorf("after the refusal the model says %q; want it to have read the refusal", c.Text)
	}

	c = w.aiSay("list notes", 3, "")
	if tool := c.Tools[0]; tool.Name != "notes_note_list" || tool.Result != "No notes yet." {
		t.Errorf("list notes after the refusal shows %+v; want No notes yet. (the refused note never reached the server)", tool)
	}

	// Stop while the question is open: the SDK's abortSignal reaches
	// approve, the app withdraws its question, the chat is ready again,
	// and the note never reaches the server.
	w.chatSay("note call mom")
	w.waitFor("the approval question", func() bool {
		var asked bool
		_ = w.win.Eval(w.ctx, `document.querySelector("#approval") !== null`, &asked)
		return asked
	})
	if err := w.win.Click(w.ctx, "#stop"); err != nil {
		t.Fatalf("clicking Stop: %v", err)
	}
	w.waitFor("the question withdrawn and the chat ready", func() bool {
		var done bool
		_ = w.win.Eval(w.ctx, `document.querySelector("#approval") === null && document.querySelector("#chat")?.dataset.status === "ready"`, &done)
		return done
	})
	w.waitFor("the stopped call's result", func() bool {
		c = w.aiTurn()
		return c.Users == 4 && len(c.Tools) == 1 && c.Tools[0].State == "output-error"
	})
	if tool := c.Tools[0]; tool.Name != "notes_note_add" || !strings.Contains(tool.Result, "stopped this call") {
		t.Errorf("the stopped call shows %+v; want notes_note_add saying it was stopped", tool)
	}
	c = w.aiSay("list notes", 5, "")
	if tool := c.Tools[0]; tool.Name != "notes_note_list" || tool.Result != "No notes yet." {
		t.Errorf("list notes after the stop shows %+v; want No notes yet. (the stopped call never reached the server)", tool)
	}

	// A model's bad arguments are honest error results it reads.
	c = w.aiSay("reverse without text", 6, "")
	if tool := c.Tools[0]; tool.Error != "true" || !strings.Contains(tool.Result, "The arguments for notes_reverse do not match its input schema") {
		t.Errorf("reverse without its text shows %+v; want the catalog's schema error as an error result", tool)
	}
	c = w.aiSay("reverse a list", 7, "")
	if tool := c.Tools[0]; tool.Error != "true" || !strings.HasPrefix(tool.Result, "The arguments for notes_reverse must be a JSON object") {
		t.Errorf("reverse with a list shows %+v; want the error result that arguments must be an object", tool)
	}
	if !strings.HasPrefix(c.Text, "The tool did not run: The arguments for notes_reverse must be a JSON object") {
		t.Errorf("after arguments that are no object the model says %q; want it to have read the error", c.Text)
	}

	// "Allow for this chat" runs the call, and the next call of the tool
	// runs without a question.
	c = w.aiSay("note water plants", 8, "#always")
	if tool := c.Tools[0]; tool.Error != "false" || tool.Result != "Saved note 1." {
		t.Errorf("a note allowed for the chat shows %+v; want Saved note 1.", tool)
	}
	c = w.aiSay("note feed cat", 9, "")
	if tool := c.Tools[0]; tool.Error != "false" || tool.Result != "Saved note 2." {
		t.Errorf("the next note shows %+v; want Saved note 2. without a question", tool)
	}
	var asked bool
	_ = w.win.Eval(w.ctx, `document.querySelector("#approval") !== null`, &asked)
	if asked {
		t.Errorf("the chat asks about notes_note_add again after Allow for this chat")
	}
	w.noPageErrors()
}
