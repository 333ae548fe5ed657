// Package errstatus maps loadout's stable error codes (service.Error
// codes, and the HTTP layer's own) to HTTP statuses, in one place for
// every transport that answers over HTTP: the API, MCP over HTTP and the
// well-known routes.
package errstatus

import (
	"net/http"

	"github.com/loadout/loadout/service"
)

// Of maps an error code to its HTTP status:
//
//	unauthorized 401, forbidden 403, read_only 403, not_found 404,
//	conflict 409 (a stale If-Match, or the name exists), invalid 422,
//	refused 400 (a path refused by skill.CleanPath, in the URL or a body),
//	bad_request 400, too_large 413, precondition_required 428,
//	method_not_allowed 405 (no route for this method; Allow lists those),
//	unsupported_media_type 415, request_timeout 408,
//	host_not_allowed 403, cross_origin 403,
//	no_store 409 (the server has no store: a state of the server that
//	retrying will not change, so not 503), internal 500.
func Of(code string) int {
	switch code {
	case service.CodeUnauthorized:
		return http.StatusUnauthorized
	case service.CodeForbidden, service.CodeReadOnly, "host_not_allowed", "cross_origin":
		return http.StatusForbidden
	case service.CodeNotFound:
		return http.StatusNotFound
	case service.CodeConflict, service.CodeNoStore:
		return http.StatusConflict
	case service.CodeInvalid:
		return http.StatusUnprocessableEntity
	case service.CodeRefused, "bad_request":
		return http.StatusBadRequest
	case service.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case "precondition_required":
		return http.StatusPreconditionRequired
	case "unsupported_media_type":
		return http.StatusUnsupportedMediaType
	case "request_timeout":
		return http.StatusRequestTimeout
	case "method_not_allowed":
		return http.StatusMethodNotAllowed
	}
	return http.StatusInternalServerError
}
