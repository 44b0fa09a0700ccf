package catalog

import (
	"context"
	"encoding/json"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// The provider formats come in the next change.

var errTODO = mcperr.New(mcperr.InvalidArgument, "catalog: provider formats are not implemented yet")

func formatOf(f Format) (Format, error) { return "", errTODO }

// Export is not implemented yet.
func Export(f Format, tools []Tool) (json.RawMessage, error) { return nil, errTODO }

// HandleToolCalls is not implemented yet.
func (c *Catalog) HandleToolCalls(ctx context.Context, f Format, calls json.RawMessage, opts CallOptions) (json.RawMessage, error) {
	return nil, errTODO
}
