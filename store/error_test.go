package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/loadout/loadout/store"
)

func TestErrorCode(t *testing.T) {
	cause := errors.New("disk on fire")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{cause, store.Internal},
		{store.Errorf(store.NotFound, "no skill %q", "x"), store.NotFound},
		{fmt.Errorf("wrapped: %w", &store.Error{Code: store.Conflict, Current: 3}), store.Conflict},
		{&store.Error{Message: "no code"}, store.Internal},
	} {
		if got := store.ErrorCode(tc.err); got != tc.want {
			t.Errorf("ErrorCode(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	e := &store.Error{Code: store.Internal, Message: "store: commit", Err: cause}
	if !errors.Is(e, cause) || e.Error() != "store: commit: disk on fire" {
		t.Errorf("internal error: %v", e)
	}
	if store.ErrorMessage(e) != "internal error" || store.ErrorMessage(store.Errorf(store.Invalid, "bad path")) != "bad path" {
		t.Error("ErrorMessage")
	}
}
