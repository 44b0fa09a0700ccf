package catalog

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcpclient"
)

// syncLocked rebuilds the name table and the aggregated list, and queues a
// statuschange for every server whose status differs from the one last
// announced and one toolschanged for the servers whose part of the list
// changed. Comparing with what was announced makes each event fire exactly
// once per change, however many paths lead to it.
func (c *Catalog) syncLocked() {
	ids := slices.Sorted(maps.Keys(c.entries))
	if c.renamed || c.exported == nil {
		c.renamed = false
		var keys []toolKey
		for _, id := range ids {
			for _, t := range c.entries[id].tools {
				keys = append(keys, toolKey{id, t.Name})
			}
		}
		reserved := []string{MetaSearchTools, MetaCallTool}
		for name := range c.meta {
			reserved = append(reserved, name)
		}
		c.exported = assignNames(keys, reserved)
		c.names = make(map[string]toolKey, len(c.exported))
		for k, name := range c.exported {
			c.names[name] = k
		}
	}
	prev := c.listed
	c.listed = c.listed[:0:0]
	parts := make(map[string]string, len(ids))
	for _, id := range ids {
		e := c.entries[id]
		if !e.contributes() {
			continue
		}
		// A server's part changes when its tools do or when their names do.
		sig := []string{strconv.Itoa(e.toolsVer)}
		for _, t := range e.tools {
			name := c.exported[toolKey{id, t.Name}]
			ui, _ := mcpclient.UIOf(t)
			c.listed = append(c.listed, Tool{Name: name, ServerID: id, Tool: t, UI: ui})
			sig = append(sig, name)
		}
		parts[id] = strings.Join(sig, "\x00")
	}
	for _, name := range slices.Sorted(maps.Keys(c.meta)) {
		c.listed = append(c.listed, Tool{Name: name, Tool: c.meta[name]})
	}
	c.exports.relist(prev, c.listed)
	for _, id := range ids {
		e := c.entries[id]
		st := c.statusLocked(e)
		if e.last == nil || !sameStatus(*e.last, st) {
			e.last = &st
			c.emitLocked(EventStatusChange, StatusChange{ID: id, Status: st})
		}
	}
	var changed []string
	for id := range parts {
		if c.published[id] != parts[id] {
			changed = append(changed, id)
		}
	}
	for id := range c.published {
		if _, ok := parts[id]; !ok {
			changed = append(changed, id)
		}
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		c.published = parts
		c.emitLocked(EventToolsChanged, ToolsChanged{IDs: changed})
	}
}

func sameStatus(a, b Status) bool {
	ea, eb := a.Error, b.Error
	a.Error, b.Error = nil, nil
	if a != b {
		return false
	}
	if ea == nil || eb == nil {
		return ea == eb
	}
	return *ea == *eb
}
