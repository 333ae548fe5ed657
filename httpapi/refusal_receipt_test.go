package httpapi_test

import (
	"encoding/json"
	"testing"

	"github.com/loadout/loadout/store"
)

// TestRefusedReadLeavesReceipt: a read whose path the path check refuses
// leaves a receipt with outcome refused and the refusal's code, as a
// not-found read leaves one with outcome not_found. The answer is unchanged: 400
// refused with the path check's code.
func TestRefusedReadLeavesReceipt(t *testing.T) {
	e := newEnv(t, baseFiles)
	r := e.do(t, "GET", "/v1/agents/coder/skills/alpha/files/..%2F..%2Fetc%2Fpasswd", e.coder, nil)
	wantErr(t, r, 400, "refused")
	want(t, e.do(t, "GET", "/v1/agents/coder/skills/alpha/files/references%2Fnone.md", e.coder, nil), 404)
	r = e.do(t, "GET", "/v1/receipts?agent=coder&skill=alpha", e.admin, nil)
	want(t, r, 200)
	var rs struct{ Receipts []store.Receipt }
	if err := json.Unmarshal(r.body, &rs); err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]store.Receipt{}
	for _, rc := range rs.Receipts {
		outcomes[rc.Outcome] = rc
	}
	rc, ok := outcomes["refused"]
	if !ok {
		t.Fatalf("no receipt for the refused read: %s", r.body)
	}
	if rc.Action != "read" || rc.Path != "../../etc/passwd" || rc.Code != "path-dotdot" || rc.Transport != "http" || rc.Token == "" {
		t.Errorf("refused receipt: %+v", rc)
	}
	if nf, ok := outcomes["not_found"]; !ok || nf.Code != "" {
		t.Errorf("no receipt for the not-found read: %s", r.body)
	}
}
