package config

import (
	"strings"
	"testing"
)

func TestLimitsMaxFileSize(t *testing.T) {
	f, err := Parse([]byte(`{"agents": [], "limits": {"maxFileSize": 4096}}`), "/srv/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.CatalogOptions().Scan.MaxFileSize; got != 4096 {
		t.Errorf("Scan.MaxFileSize %d", got)
	}
	_, err = Parse([]byte(`{"agents": [], "limits": {"maxFileSize": -1}}`), "/srv/loadout.json")
	if err == nil || !strings.Contains(err.Error(), "limits") {
		t.Errorf("negative maxFileSize: %v", err)
	}
}
