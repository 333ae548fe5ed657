package store

import (
	"errors"
	"fmt"

	"github.com/loadout/loadout/skill"
)

// Error codes. They are stable: transports map them to statuses (404, 409,
// 422, 500) and programs switch on them.
const (
	NotFound = "not_found"
	Conflict = "conflict"
	Invalid  = "invalid"
	Internal = "internal"
)

// Error is the store's one error type.
type Error struct {
	Code    string
	Message string
	// Field and Path name what is at fault, when one thing is.
	Field string
	Path  string
	// Current is the skill's current version, for conflicts (0 when the
	// skill does not exist).
	Current int
	// Problems are Bundle.Check's refusals (and warnings), for "invalid".
	Problems []skill.Diagnostic
	// Err is the underlying cause, for "internal".
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an Error with a code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, "" for nil
// and Internal for any other error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Code != "" {
		return e.Code
	}
	return Internal
}

// ErrorMessage returns the human message of err without the internal cause
// for *Error values of codes other than Internal, so transports can show it
// to callers.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != Internal && e.Message != "" {
		return e.Message
	}
	return "internal error"
}
