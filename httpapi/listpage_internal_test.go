package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/loadout/loadout/skill"
)

// A page of the skill list reads the digests of its own rows, from their
// skills, when it is encoded: the list keeps none (reading every skill's
// files for the first page took 4-8 s of serve's warm-up at 50,000
// skills). A row's digest is the skill's ContentDigest, and the list's
// rows are left as they were (a page does not write into them).
func TestListPageReadsItsDigests(t *testing.T) {
	var items []skillSummary
	var names []string
	for i := range 5 {
		name := fmt.Sprintf("s%d", i)
		b := &skill.Bundle{Content: []byte("---\nname: " + name + "\ndescription: D.\n---\nBody " + name + ".\n")}
		doc, _, err := b.Check(skill.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		sk := skill.NewVirtual(doc, "plugin://x/"+name, b.Manifest(), &skill.Origin{Kind: "plugin"}, b.Reader())
		items = append(items, skillSummary{Name: name, Description: sk.Description, Mode: "listed", Enabled: true, sk: sk})
		names = append(names, name)
	}
	ls := &listing{items: items, names: names}
	body, err := ls.page("", 2)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Skills []struct{ Name, Digest string }
		Limit  int
	}
	if err := json.Unmarshal(body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Skills) != 2 || got.Limit != 2 {
		t.Fatalf("page: %+v", got)
	}
	for i, r := range got.Skills {
		if want := items[i].sk.ContentDigest(); r.Name != names[i] || r.Digest != want || want == "" {
			t.Errorf("row %d: %s %q, want %s %q", i, r.Name, r.Digest, names[i], want)
		}
	}
	for i, it := range ls.items {
		if it.Digest != "" {
			t.Errorf("item %d keeps digest %q after a page was encoded", i, it.Digest)
		}
	}
	// The same rows read again: the list kept is the same one (its pages
	// built); a row of another skill value: a new list.
	var c listCache
	c.put(listKey{}, ls)
	again := &listing{items: append([]skillSummary(nil), items...), names: names}
	c.put(listKey{gen: 1}, again)
	if c.last.Load().ls != ls {
		t.Errorf("a list read again with the same rows replaced the one kept")
	}
	other := &listing{items: append([]skillSummary(nil), items...), names: names}
	other.items[3].sk = items[4].sk
	c.put(listKey{gen: 2}, other)
	if c.last.Load().ls != other {
		t.Errorf("a list with another skill in a row was taken for the one kept")
	}
}
