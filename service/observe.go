package service

import "context"

// What observers (the metrics package) read of the service. Each is
// cheap and allocates little: a scrape calls them, never a request.

// Activation is one load or file read, as an observer is told of it
// (OnActivation).
type Activation struct {
	Agent string // the agent's id ("*" for the global catalog): a configured one
	// Skill is the name asked for: a catalog skill's when Found, else
	// the caller's own text, which an observer must not use as a label.
	Skill   string
	Action  string // "load" or "read"
	Outcome string // the result's status: catalog.StatusOK, StatusNotFound, StatusRefused…
	Found   bool   // the skill exists for the agent
}

// OnActivation registers f to be told of every load and file read, right
// after its receipt is queued (nil removes it). f runs on the request's
// goroutine: it must be quick and must not block. Without one, a load
// pays one atomic load for it.
func (s *Service) OnActivation(f func(Activation)) {
	if f == nil {
		s.onAct.Store(nil)
		return
	}
	s.onAct.Store(&f)
}

// ReceiptsPending is how many receipts wait to be written to the store
// (the receipt backlog): at most 64k; near it while the store fails.
func (s *Service) ReceiptsPending() int {
	s.rcpt.mu.Lock()
	defer s.rcpt.mu.Unlock()
	return len(s.rcpt.pending)
}

// ReceiptWriteErrors counts the receipt writes to the store that failed
// since the service started: a batch kept pending to be tried again, or
// rows the store refused and that were dropped (ReceiptsLost counts
// those). Each is logged.
func (s *Service) ReceiptWriteErrors() uint64 { return s.rcpt.writeErrors.Load() }

// UISessions is how many web UI sessions are open (expired ones not
// counted).
func (s *Service) UISessions() int {
	st := s.sessions()
	st.mu.Lock()
	defer st.mu.Unlock()
	now := st.now()
	n := 0
	for _, ss := range st.m {
		if !st.expired(ss, now) {
			n++
		}
	}
	return n
}

// RemoteStatus lists the remote sources as the manager holds them (no
// principal: for observers; Sources is the caller-facing list).
func (s *Service) RemoteStatus(context.Context) []SourceStatus {
	if r := s.getRemotes(); r != nil {
		return r.Status()
	}
	return nil
}
