package store

import "context"

// ImportPartial imports the accepted items even when others are refused:
// the refused items are reported as refused and never written, and the
// rest are written in one transaction (all of them or, on a database
// failure, none). It is Import, then, when something was refused, Import of
// the accepted items alone; the first pass writes nothing, so the store
// sees one transaction either way.
func ImportPartial(ctx context.Context, s Store, items []ImportItem) ([]ImportResult, error) {
	res, err := s.Import(ctx, items)
	if err != nil {
		return nil, err
	}
	var keep []int
	for i, r := range res {
		if r.Action == ActionSkipped {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 {
		// Nothing refused (everything was written), or nothing accepted.
		return res, nil
	}
	sub := make([]ImportItem, len(keep))
	for k, i := range keep {
		sub[k] = items[i]
	}
	again, err := s.Import(ctx, sub)
	if err != nil {
		return nil, err
	}
	for k, i := range keep {
		res[i] = again[k]
	}
	return res, nil
}
