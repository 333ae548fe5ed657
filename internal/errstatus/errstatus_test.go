package errstatus

import (
	"testing"

	"github.com/loadout/loadout/service"
)

func TestOf(t *testing.T) {
	for code, want := range map[string]int{
		service.CodeUnauthorized: 401, service.CodeForbidden: 403, service.CodeReadOnly: 403,
		service.CodeNotFound: 404, service.CodeConflict: 409, service.CodeNoStore: 409,
		service.CodeInvalid: 422, service.CodeRefused: 400, service.CodeTooLarge: 413,
		"host_not_allowed": 403, "cross_origin": 403, "unsupported_media_type": 415,
		"request_timeout": 408, "method_not_allowed": 405, "precondition_required": 428,
		service.CodeInternal: 500, "something new": 500,
	} {
		if got := Of(code); got != want {
			t.Errorf("Of(%q) = %d, want %d", code, got, want)
		}
	}
}
