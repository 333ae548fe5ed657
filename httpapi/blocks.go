package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

// maxBlockBody bounds a POST /v1/blocks body: a reason and a name, well
// under it.
const maxBlockBody = 16 << 10

func (a *api) listBlocks(w http.ResponseWriter, r *http.Request) {
	bs, err := a.svc.Blocks(r.Context(), principal(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Blocks []store.Block `json:"blocks"`
	}{bs})
}

func (a *api) addBlock(w http.ResponseWriter, r *http.Request) {
	data, e := readBody(w, r, maxBlockBody, "a block")
	if e != nil {
		writeErr(w, e)
		return
	}
	var in struct {
		Skill   string `json:"skill"`
		Version int    `json:"version"`
		Digest  string `json:"digest"`
		Source  string `json:"source"`
		Reason  string `json:"reason"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		writeErr(w, badRequest("", `the body is not a block: %v; send {"skill": NAME, "reason": WHY} (with "version" or "digest" for one version) or {"source": ID, "reason": WHY}`, err))
		return
	}
	b, err := a.svc.Block(r.Context(), principal(r), store.Block{Skill: in.Skill, Version: in.Version, Digest: in.Digest, Source: in.Source, Reason: in.Reason}, service.TransportHTTP)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, b)
}

func (a *api) removeBlock(w http.ResponseWriter, r *http.Request) {
	bs, err := a.svc.Unblock(r.Context(), principal(r), r.PathValue("block"), service.TransportHTTP)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if bs == nil {
		bs = []store.Block{}
	}
	writeJSON(w, http.StatusOK, struct {
		Blocks []store.Block `json:"blocks"`
	}{bs})
}
