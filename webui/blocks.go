package webui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

// The Blocks page (admin only): the kill switch's blocks, each with an
// unblock button, and the form a skill's page posts to block it.

type blocksData struct {
	Blocks []blockRow
	// The form's values, kept on an error.
	Skill, Version, Digest, Source, Reason string
	Error, Field                           string
	Done                                   string // what was just done, for the notice
	Store                                  bool   // the server keeps blocks
}

type blockRow struct {
	store.Block
	Target, Created string
}

func (u *ui) blocksPage(w http.ResponseWriter, r *http.Request) {
	d := &blocksData{Done: r.URL.Query().Get("done"), Skill: r.URL.Query().Get("skill")}
	u.renderBlocks(w, r, d, http.StatusOK)
}

func (u *ui) renderBlocks(w http.ResponseWriter, r *http.Request, d *blocksData, status int) {
	bs, err := u.svc.Blocks(r.Context(), principal(r))
	if err != nil {
		u.failErr(w, r, err)
		return
	}
	_, d.Store = u.svc.Store().(store.Blocker)
	for _, b := range bs {
		d.Blocks = append(d.Blocks, blockRow{Block: b, Target: b.Target(), Created: b.CreatedAt.Local().Format(time.DateTime)})
	}
	if status != http.StatusOK {
		w = &statusWriter{ResponseWriter: w, status: status}
	}
	u.render(w, r, "blocks.html", page{Title: "Blocks", Active: "tokens", Data: d})
}

// addBlock blocks what the form names; a refusal shows the form again
// with the values and the reason.
func (u *ui) addBlock(w http.ResponseWriter, r *http.Request) {
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	d := &blocksData{Skill: f("skill"), Version: f("version"), Digest: f("digest"), Source: f("source"), Reason: r.PostFormValue("reason")}
	b := store.Block{Skill: d.Skill, Digest: d.Digest, Source: d.Source, Reason: d.Reason}
	if d.Version != "" {
		n, err := strconv.Atoi(d.Version)
		if err != nil || n < 1 {
			d.Error, d.Field = "The version must be a stored version number (1, 2, …), or left empty to block every version.", "version"
			u.renderBlocks(w, r, d, http.StatusUnprocessableEntity)
			return
		}
		b.Version = n
	}
	got, err := u.svc.Block(r.Context(), principal(r), b, uiTransport)
	if err != nil {
		e := service.AsError(err)
		d.Error, d.Field = "Nothing was blocked: "+e.Message, e.Field
		u.renderBlocks(w, r, d, http.StatusUnprocessableEntity)
		return
	}
	http.Redirect(w, r, Prefix+"blocks?done="+url.QueryEscape("Blocked "+got.Target()+": no instance lists or serves it now."), http.StatusSeeOther)
}

func (u *ui) removeBlock(w http.ResponseWriter, r *http.Request) {
	bs, err := u.svc.Unblock(r.Context(), principal(r), r.PathValue("id"), uiTransport)
	if err != nil {
		u.failErr(w, r, err)
		return
	}
	var ts []string
	for _, b := range bs {
		ts = append(ts, b.Target())
	}
	http.Redirect(w, r, Prefix+"blocks?done="+url.QueryEscape("Unblocked "+strings.Join(ts, ", ")+": it is served again."), http.StatusSeeOther)
}
