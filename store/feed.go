package store

import "context"

// OthersFeed is a Server whose change feed can leave out the writes of
// this instance (store/sqlstore's is one).
type OthersFeed interface {
	// ChangesByOthers is Changes without this instance's own writes.
	ChangesByOthers(ctx context.Context) (<-chan struct{}, error)
}

// ChangesByOthers follows the changes other instances make to the store,
// when s can tell them from its own (OthersFeed), and every change
// otherwise. A server whose writes bring its catalog up to date as they
// are made (the service does) follows this feed rather than Changes, so
// that a write is applied once, not twice.
func ChangesByOthers(ctx context.Context, s Server) (<-chan struct{}, error) {
	if o, ok := s.(OthersFeed); ok {
		return o.ChangesByOthers(ctx)
	}
	return s.Changes(ctx)
}
