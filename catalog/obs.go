package catalog

import (
	"context"
	"strconv"

	"github.com/loadout/loadout/internal/obs"
)

// The catalog's operations, for the observers the binary registered
// (traces, metrics): each refresh (every change of the catalog: a reload,
// a refresh after files or the store changed, a block, a reconfiguration)
// is one obs.KindRefresh operation named OpRefresh, with one child per
// source it reads, named by the source's kind (SourceFolder, …); each
// safety check of the catalog's new skills is one obs.KindSafetyScan
// operation named OpSafetyScan.
const (
	OpRefresh    = "catalog"
	OpSafetyScan = "catalog"

	SourceFolder = "folder"
	SourceStore  = "store"
	SourcePlugin = "plugin"
	SourceRemote = "remote"
)

// sourceKind is the kind of a source, as its read operation is named.
func sourceKind(spec SourceSpec) string {
	switch {
	case spec.Store:
		return SourceStore
	case spec.Plugin != "":
		return SourcePlugin
	case spec.Remote():
		return SourceRemote
	}
	return SourceFolder
}

// startScan starts the safety check of n skills.
func startScan(ctx context.Context, n int) (context.Context, func(error)) {
	if !obs.Enabled() {
		return ctx, nopEnd
	}
	return obs.Start(ctx, obs.KindSafetyScan, OpSafetyScan, obs.Attr{Key: "loadout.skills", Value: strconv.Itoa(n)})
}

func nopEnd(error) {}
