package httpapi_test

import (
	"encoding/json"
	"testing"
)

// TestReceiptsCount: GET /v1/receipts gives every receipt its count (how
// many loads the row stands for: identical loads of one flush are one
// row), the counts add up to the loads made, and the OpenAPI schema of a
// Receipt has count, required.
func TestReceiptsCount(t *testing.T) {
	e := newEnv(t, baseFiles)
	for range 5 {
		want(t, e.do(t, "GET", "/v1/agents/coder/skills/alpha", e.coder, nil), 200)
	}
	r := e.do(t, "GET", "/v1/receipts?agent=coder&skill=alpha", e.admin, nil)
	want(t, r, 200)
	var rs struct{ Receipts []map[string]any }
	if err := json.Unmarshal(r.body, &rs); err != nil {
		t.Fatal(err)
	}
	var loads float64
	for _, rc := range rs.Receipts {
		n, ok := rc["count"].(float64)
		if !ok || n < 1 {
			t.Fatalf("receipt without a count of at least 1: %v", rc)
		}
		loads += n
	}
	if loads != 5 || len(rs.Receipts) > 5 {
		t.Errorf("%d rows counting %.0f loads, want 5 loads: %s", len(rs.Receipts), loads, r.body)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
				Required   []string       `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(e.do(t, "GET", "/v1/openapi.json", e.admin, nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas["Receipt"]
	if _, ok := s.Properties["count"]; !ok {
		t.Errorf("the Receipt schema has no count: %v", s.Properties)
	}
	required := false
	for _, f := range s.Required {
		required = required || f == "count"
	}
	if !required {
		t.Errorf("count is not required in the Receipt schema: %v", s.Required)
	}
}
