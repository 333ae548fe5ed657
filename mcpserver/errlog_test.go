package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/loadout/loadout/service"
)

// An internal error reaches the log with its cause, and the client gets
// only a generic message; a refusal is not logged as a failure. (No MCP
// request can make the service fail for real, so the error is made here.)
func TestInternalErrorsLoggedWithCause(t *testing.T) {
	f := newFixture(t)
	var logs bytes.Buffer
	s := newServer(context.Background(), f.svc, Options{Agent: "coder", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	cause := errors.New("read /srv/skills/alpha: input/output error")
	e := s.refusal(cause)
	if e.Code != service.CodeInternal || strings.Contains(e.Message, "input/output") {
		t.Errorf("the client sees %q (%s)", e.Message, e.Code)
	}
	if !strings.Contains(logs.String(), "input/output error") || !strings.Contains(logs.String(), "agent=coder") {
		t.Errorf("the log lacks the cause: %s", logs.String())
	}
	logs.Reset()
	s.refusal(&service.Error{Code: service.CodeNotFound, Message: "no such skill"})
	if logs.Len() != 0 {
		t.Errorf("a refusal was logged as a failure: %s", logs.String())
	}
}
