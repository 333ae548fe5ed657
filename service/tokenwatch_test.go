package service

import (
	"context"
	"testing"
	"time"
)

// TestWatchTokenSharedToken: two watches of one token are kept apart:
// stopping one leaves the other, which is told of the revocation while
// the stopped one is not. An empty token id (the open mode) is never
// told.
func TestWatchTokenSharedToken(t *testing.T) {
	ctx := context.Background()
	s := storeService(t, freshStore(t), Options{})
	_, tok, err := s.CreateToken(ctx, admin, "a", []string{"agent:ops"})
	if err != nil {
		t.Fatal(err)
	}
	kept, stopped, open := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer s.WatchToken(tok.ID, func() { close(kept) })()
	stop := s.WatchToken(tok.ID, func() { close(stopped) })
	defer s.WatchToken("", func() { close(open) })()
	stop()
	if err := s.RevokeToken(ctx, admin, tok.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-kept:
	case <-time.After(2 * time.Second):
		t.Fatal("the watch left after another of the same token stopped was not told of the revocation")
	}
	select {
	case <-stopped:
		t.Error("a stopped watch was told")
	case <-open:
		t.Error("a watch of no token was told")
	case <-time.After(300 * time.Millisecond):
	}
}
