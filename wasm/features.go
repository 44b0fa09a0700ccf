//go:build js && wasm && !mcpwasm_client

package main

import "github.com/mcpwasm/mcpwasm/agent"

// features is what the catalog and the agent keep in the runtime: the
// page's catalogs and agents by the ids it chose (under app.mu).
type features struct {
	catalogs map[string]*catalogEntry
	agents   map[string]*agent.Agent
}

func newFeatures() features {
	return features{catalogs: make(map[string]*catalogEntry), agents: make(map[string]*agent.Agent)}
}

// featureHandlers is the catalog's and the agent's part of jsapi.Ops.
func (a *app) featureHandlers() map[string]handler {
	return map[string]handler{
		"catalog.new":              op(a.opNewCatalog),
		"catalog.add":              op(a.opCatalogAdd),
		"catalog.remove":           op(a.opCatalogRemove),
		"catalog.enable":           op(a.opCatalogEnable),
		"catalog.disable":          op(a.opCatalogDisable),
		"catalog.authorize":        op(a.opCatalogAuthorize),
		"catalog.tools":            op(a.opCatalogTools),
		"catalog.toolsFor":         op(a.opCatalogToolsFor),
		"catalog.callTool":         op(a.opCatalogCallTool),
		"catalog.viewTools":        op(a.opCatalogViewTools),
		"catalog.viewCall":         op(a.opCatalogViewCall),
		"catalog.handleToolCalls":  op(a.opCatalogToolCalls),
		"catalog.close":            op(a.opCatalogClose),
		"catalog.webmcpChanged":    op(a.opCatalogWebMCPChanged),
		"catalog.addView":          op(a.opCatalogAddView),
		"catalog.viewChanged":      op(a.opCatalogViewChanged),
		"agent.new":                op(a.opNewAgent),
		"agent.run":                op(a.opAgentRun),
		"agent.close":              op(a.opAgentClose),
		"agent.conversation":       op(a.opConversation),
		"agent.conversations":      op(a.opConversations),
		"agent.renameConversation": op(a.opRenameConversation),
		"agent.deleteConversation": op(a.opDeleteConversation),
	}
}
