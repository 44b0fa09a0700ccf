package demo

import (
	"context"
	_ "embed"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwasm/mcpwasm/demo/cors"
)

// The second demo server: no sign-in, other tools than the first, for a
// catalog of several servers.
const (
	SecondName = "mcpwasm-demo-notes"

	ToolWeather   = "weather"
	ToolReverse   = "reverse"
	ToolWordCount = "word_count"
	ToolNoteAdd   = "note_add"
	ToolNoteList  = "note_list"
	ToolClock     = "clock"
	// Two names longer than a model API allows once a catalog prefixes
	// them with the server's id: cut to 64 characters they are the same,
	// so a catalog must tell them apart.
	ToolLongA = "summarize_the_quarterly_report_of_the_finance_team_for_the_board_version_one"
	ToolLongB = "summarize_the_quarterly_report_of_the_finance_team_for_the_board_version_two"

	// NotesViewURI is note_list's view (MCP Apps): the notes as a list
	// with a field to add one, which calls note_add from the view.
	NotesViewURI = "ui://notes/list.html"
	// AppMIMEType is the media type of an MCP Apps view.
	AppMIMEType = "text/html;profile=mcp-app"
)

// notesView is the HTML of [NotesViewURI]: self-contained (inline script
// and style only, no external resource), speaking the view's side of MCP
// Apps by hand over postMessage.
//
//go:embed notesview.html
var notesView string

// SecondHandler returns an http.Handler serving a new second demo server
// (weather, text tools, notes; note_list with a view of its own, MCP Apps:
// [NotesViewURI]) over Streamable HTTP at [StreamablePath], wrapped in CORS
// middleware. Its state (the notes) lives as long as the
// handler.
func SecondHandler(opts Options) http.Handler {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := mcp.NewServer(&mcp.Implementation{Name: SecondName, Title: "mcpwasm demo notes server", Version: Version}, &mcp.ServerOptions{
		Instructions: "A second demo server without sign-in: weather, text tools and notes.",
		Logger:       logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	if opts.OnRequest != nil {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				opts.OnRequest(method)
				return next(ctx, method, req)
			}
		})
	}
	n := &notes{}
	addSecondTools(s, n)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Logger: opts.Logger, SessionTimeout: opts.SessionTimeout, PropagateRequestCancellation: true,
	})
	mux := http.NewServeMux()
	mux.Handle(StreamablePath, h)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "mcpwasm demo notes server\n\nStreamable HTTP: "+StreamablePath+"\n")
	})
	return cors.Wrap(mux, opts.CORS)
}

// notes is the second server's note list.
type notes struct {
	mu   sync.Mutex
	list []string
}

// The inputs and outputs of the second server's tools.
type (
	CityInput struct {
		City string `json:"city"`
	}
	WeatherOutput struct {
		City        string  `json:"city"`
		Conditions  string  `json:"conditions"`
		Temperature float64 `json:"temperatureC"`
	}
	TextInput struct {
		Text string `json:"text"`
	}
	CountOutput struct {
		Words int `json:"words"`
		Runes int `json:"characters"`
	}
	NoteInput struct {
		Note string `json:"note"`
	}
	// NotesOutput is note_list's structured content, which its view shows.
	NotesOutput struct {
		Notes []string `json:"notes"`
	}
)

func addSecondTools(s *mcp.Server, n *notes) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	text1 := func(name, title, desc string) *mcp.Tool {
		return &mcp.Tool{Name: name, Title: title, Description: desc, Annotations: readOnly,
			InputSchema: object([]string{"text"}, schema{"text": schema{"type": "string", "title": "Text"}})}
	}
	mcp.AddTool(s, &mcp.Tool{
		Name: ToolWeather, Title: "Weather", Annotations: readOnly,
		Description: "Today's weather for a city (made up, but the same for the same city all day).",
		InputSchema: object([]string{"city"}, schema{"city": schema{"type": "string", "title": "City", "minLength": 1}}),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in CityInput) (*mcp.CallToolResult, WeatherOutput, error) {
		out := fakeWeather(in.City, time.Now())
		return text(fmt.Sprintf("%s: %s, %.0f °C", out.City, out.Conditions, out.Temperature)), out, nil
	})
	mcp.AddTool(s, text1(ToolReverse, "Reverse text", "Returns the text backwards."),
		func(_ context.Context, _ *mcp.CallToolRequest, in TextInput) (*mcp.CallToolResult, any, error) {
			r := []rune(in.Text)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return text(string(r)), nil, nil
		})
	mcp.AddTool(s, text1(ToolWordCount, "Count words", "Counts the words and characters of a text."),
		func(_ context.Context, _ *mcp.CallToolRequest, in TextInput) (*mcp.CallToolResult, CountOutput, error) {
			out := CountOutput{Words: len(strings.Fields(in.Text)), Runes: utf8.RuneCountInString(in.Text)}
			return text(fmt.Sprintf("%d words, %d characters", out.Words, out.Runes)), out, nil
		})
	mcp.AddTool(s, &mcp.Tool{
		Name: ToolNoteAdd, Title: "Add a note", Description: "Saves a note on the server (it changes state: a careful host asks first).",
		InputSchema: object([]string{"note"}, schema{"note": schema{"type": "string", "title": "Note", "minLength": 1, "maxLength": 500}}),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in NoteInput) (*mcp.CallToolResult, any, error) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if len(n.list) >= 100 {
			return toolError("the notebook is full (100 notes)"), nil, nil
		}
		n.list = append(n.list, in.Note)
		return text(fmt.Sprintf("Saved note %d.", len(n.list))), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name: ToolNoteList, Title: "List notes", Description: "Lists the saved notes.", Annotations: readOnly,
		InputSchema: object(nil, schema{}),
		Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": NotesViewURI}},
	}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, NotesOutput, error) {
		n.mu.Lock()
		defer n.mu.Unlock()
		out := NotesOutput{Notes: append([]string{}, n.list...)} // [] rather than null when empty
		if len(n.list) == 0 {
			return text("No notes yet."), out, nil
		}
		var b strings.Builder
		for i, s := range n.list {
			fmt.Fprintf(&b, "%d. %s\n", i+1, s)
		}
		return text(strings.TrimSpace(b.String())), out, nil
	})
	s.AddResource(&mcp.Resource{
		URI: NotesViewURI, Name: "notes-view", Title: "Notes", MIMEType: AppMIMEType,
		Description: "note_list's view: the notes as a list, with a field to add one.",
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: NotesViewURI, MIMEType: AppMIMEType, Text: notesView}}}, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name: ToolClock, Title: "Clock", Description: "The server's time, in UTC.", Annotations: readOnly,
		InputSchema: object(nil, schema{}),
	}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return text(time.Now().UTC().Format(time.RFC3339)), nil, nil
	})
	for _, name := range []string{ToolLongA, ToolLongB} {
		version := name[strings.LastIndexByte(name, '_')+1:]
		mcp.AddTool(s, text1(name, "Summarize ("+version+")", "Summarizes a report, "+version+" of the summary style."),
			func(_ context.Context, _ *mcp.CallToolRequest, in TextInput) (*mcp.CallToolResult, any, error) {
				words := strings.Fields(in.Text)
				if len(words) > 12 {
					words = append(words[:12], "…")
				}
				return text(fmt.Sprintf("Summary (%s): %s", version, strings.Join(words, " "))), nil, nil
			})
	}
}

// fakeWeather is the same for a city all day.
func fakeWeather(city string, now time.Time) WeatherOutput {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s|%s", strings.ToLower(strings.TrimSpace(city)), now.UTC().Format("2006-01-02"))
	v := h.Sum32()
	conditions := []string{"sunny", "cloudy", "rainy", "windy", "foggy", "snowy"}
	sort.Strings(conditions)
	return WeatherOutput{City: strings.TrimSpace(city), Conditions: conditions[v%uint32(len(conditions))], Temperature: float64(int(v%35) - 5)}
}
