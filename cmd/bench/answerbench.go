package main

import (
	"fmt"
	"net/url"

	"github.com/mcpwasm/mcpwasm/demo/model"
)

// Navigation → first agent answer, part of the runtime scenario: the page
// loads its client, makes a catalog of the demo server (the TS SDK: a
// client, connected, its tools listed) and runs one agent turn against the
// stand-in model, which calls echo and then answers with text quoting its
// result (pages/answer.js). Timed on a first and a repeat visit, as the
// first tool result is (visitTwice).

// answerClients are the clients timed to their first agent answer: the
// default runtime, the main thread, and the TS SDK with a small JS loop.
var answerClients = tabClients

// answerAsk is the user's question; answerWant is the stand-in's answer to
// it once the echo tool has answered.
const (
	answerAsk  = "echo first answer"
	answerWant = "Results: first answer"
)

// answerFig is what one visit of the agent page reports: ms since
// navigation at ready and when the answer's text was complete, the text
// and the model steps the turn took.
type answerFig struct {
	At    float64 `json:"at"`
	Ready float64 `json:"ready"`
	Text  string  `json:"text"`
	Steps int     `json:"steps"`
}

// check says whether the visit got the answer the stand-in gives when the
// tool was called and its result passed back.
func (f answerFig) check() error {
	if f.Text != answerWant || f.Steps != 2 {
		return fmt.Errorf("the agent answered %q in %d model steps; want %q in 2 (one echo call, then the answer)", f.Text, f.Steps, answerWant)
	}
	return nil
}

// answerVisit is one client's first and repeat visit.
type answerVisit struct{ First, Repeat answerFig }

// waitAnswer resolves with the page's answerFig.
const waitAnswer = `(async () => { while (!window.__answerP) await new Promise((r) => setTimeout(r, 2)); return await window.__answerP; })()`

// answerPage is runtime.html for client c in its agent mode.
func answerPage(srv *servers, c rtClient) string {
	q := url.Values{"runtime": {c.runtime}, "mcp": {srv.MCPURL}, "model": {srv.ModelURL},
		"modelID": {model.ModelID}, "ask": {answerAsk}, "want": {answerWant}}
	return srv.PageURL + "/runtime.html?" + q.Encode()
}

// runAnswerVisit times c's page to its first agent answer on a first and a
// repeat visit, and checks both answers.
func (b *browser) runAnswerVisit(srv *servers, c rtClient) (answerVisit, error) {
	first, repeat, err := visitTwice[answerFig](b, answerPage(srv, c), waitAnswer, nil)
	if err != nil {
		return answerVisit{}, err
	}
	for _, f := range []answerFig{first, repeat} {
		if err := f.check(); err != nil {
			return answerVisit{}, err
		}
	}
	return answerVisit{first, repeat}, nil
}
