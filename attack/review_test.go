package attack

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Drafts, review and exact versions per agent, against the real binary
// on SQLite and PostgreSQL: the end-to-end story and the attacks on it.

const reviewConfig = `{"agents": [
  {"agentId": "coder", "skills": [{"store": true}]},
  {"agentId": "pinned", "skills": [{"store": true}]}
], "review": {"required": true}}`

func reviewDoc(name, body string) string {
	content := fmt.Sprintf("---\nname: %s\ndescription: Use when %s is needed.\n---\n%s\n", name, name, body)
	data, _ := json.Marshal(map[string]any{"schemaVersion": 2, "skill": map[string]any{"content": content}})
	return string(data)
}

type reviewEnv struct {
	s                       *Server
	author, reviewer, agent string
}

func startReview(t *testing.T, engine string) *reviewEnv {
	s := Start(t, Options{Engine: engine, Config: reviewConfig, Tokens: true})
	return &reviewEnv{s: s, author: s.Admin, reviewer: s.Token(t, "admin"), agent: s.Token(t, "agent:coder")}
}

// body is what agent loads of skill, or "" when it cannot.
func (e *reviewEnv) body(t *testing.T, agent, skill string) string {
	t.Helper()
	code, _, body := e.s.Do(t, "GET", "/v1/agents/"+agent+"/skills/"+skill, e.reviewer, "")
	if code != 200 {
		return ""
	}
	return body
}

// pending returns the ids of the pending reviews of skill, newest first.
func (e *reviewEnv) pending(t *testing.T, skill string) []string {
	t.Helper()
	code, _, body := e.s.Do(t, "GET", "/v1/reviews?state=pending&skill="+skill, e.reviewer, "")
	if code != 200 {
		t.Fatalf("reviews: %d %s", code, body)
	}
	var out struct{ Reviews []struct{ ID string } }
	json.Unmarshal([]byte(body), &out)
	var ids []string
	for _, r := range out.Reviews {
		ids = append(ids, r.ID)
	}
	return ids
}

func (e *reviewEnv) approve(t *testing.T, token, id string) (int, string) {
	t.Helper()
	code, _, body := e.s.Do(t, "POST", "/v1/reviews/"+id+"/approve", token, `{"comment":"attack"}`)
	return code, body
}

// within fails unless cond holds within a second.
func within(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a second", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestReviewEndToEnd(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		e := startReview(t, engine)
		s := e.s
		if code, _, body := s.Do(t, "POST", "/v1/skills", e.author, reviewDoc("gamma", "Gamma one.")); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
		// The author edits (here: creates): the agent sees nothing yet.
		if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/gamma", e.agent, ""); code != 404 {
			t.Fatalf("an unapproved skill loads for the agent: %d", code)
		}
		id := e.pending(t, "gamma")[0]
		// The author cannot approve their own draft.
		if code, body := e.approve(t, e.author, id); code != 403 || !strings.Contains(body, "review.distinct") {
			t.Fatalf("self-approval: %d %s", code, body)
		}
		// The agent token cannot either.
		if code, _ := e.approve(t, e.agent, id); code != 403 {
			t.Fatalf("an agent token approved: %d", code)
		}
		if code, body := e.approve(t, e.reviewer, id); code != 200 {
			t.Fatalf("approve: %d %s", code, body)
		}
		within(t, "the approved version reaching the agent", func() bool {
			_, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/gamma", e.agent, "")
			return strings.Contains(body, "Gamma one.")
		})
		// Pin agent "pinned" to version 1; edit; the agent sees no change.
		if code, _, body := s.Do(t, "PUT", "/v1/agents/pinned/pins/gamma", e.reviewer, `{"version": 1}`); code != 200 {
			t.Fatalf("pin: %d %s", code, body)
		}
		if code, _, body := s.Do(t, "PUT", "/v1/skills/gamma", e.author, reviewDoc("gamma", "Gamma two."), "If-Match", `"v1"`); code != 200 {
			t.Fatalf("edit: %d %s", code, body)
		}
		if b := e.body(t, "coder", "gamma"); !strings.Contains(b, "Gamma one.") {
			t.Fatalf("a draft changed what the agent loads: %s", b)
		}
		if code, body := e.approve(t, e.reviewer, e.pending(t, "gamma")[0]); code != 200 {
			t.Fatalf("approve v2: %d %s", code, body)
		}
		within(t, "version 2 reaching the agent", func() bool { return strings.Contains(e.body(t, "coder", "gamma"), "Gamma two.") })
		if b := e.body(t, "pinned", "gamma"); !strings.Contains(b, "Gamma one.") {
			t.Fatalf("the pinned agent moved: %s", b)
		}
		_, _, pend := s.Do(t, "GET", "/v1/pins/pending", e.reviewer, "")
		if !strings.Contains(pend, `"agent":"pinned","skill":"gamma","version":1,"published":2`) {
			t.Fatalf("update pending: %s", pend)
		}
		if code, _, body := s.Do(t, "POST", "/v1/pins/advance", e.reviewer, `{"agent":"pinned","skill":"gamma"}`); code != 200 {
			t.Fatalf("advance: %d %s", code, body)
		}
		if b := e.body(t, "pinned", "gamma"); !strings.Contains(b, "Gamma two.") {
			t.Fatalf("after advancing: %s", b)
		}
		// The CLI sees the same reviews.
		if out, errOut, code := s.CLI(t, "review", "list", "--state", "approved", "--db", s.DB); code != 0 || strings.Count(out, "approved") != 2 {
			t.Fatalf("review list: %d %s %s", code, out, errOut)
		}
	})
}

// Approving a draft whose base is no longer published is refused, as an
// update with a stale version is.
func TestReviewStaleBase(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		e := startReview(t, engine)
		s := e.s
		s.Do(t, "POST", "/v1/skills", e.author, reviewDoc("doc", "v1"))
		e.approve(t, e.reviewer, e.pending(t, "doc")[0])
		for v, body := range []string{"v2", "v3"} {
			if code, _, b := s.Do(t, "PUT", "/v1/skills/doc", e.author, reviewDoc("doc", body), "If-Match", fmt.Sprintf(`"v%d"`, v+1)); code != 200 {
				t.Fatalf("edit: %d %s", code, b)
			}
		}
		ids := e.pending(t, "doc") // newest first: v3, v2
		if len(ids) != 2 {
			t.Fatalf("pending: %v", ids)
		}
		if code, body := e.approve(t, e.reviewer, ids[0]); code != 200 {
			t.Fatalf("approve v3: %d %s", code, body)
		}
		code, body := e.approve(t, e.reviewer, ids[1])
		if code != 409 || !strings.Contains(body, "published since") {
			t.Fatalf("approving v2 (base 1, published 3): %d %s", code, body)
		}
		if b := e.body(t, "coder", "doc"); !strings.Contains(b, "v3") {
			t.Fatalf("a refused approval changed what is served: %s", b)
		}
	})
}

// Two approvals of different drafts of one skill at once: exactly one
// wins, the other gets the conflict.
func TestReviewApprovalRace(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		e := startReview(t, engine)
		s := e.s
		s.Do(t, "POST", "/v1/skills", e.author, reviewDoc("doc", "v1"))
		e.approve(t, e.reviewer, e.pending(t, "doc")[0])
		for round := range 3 {
			base := 1 + round*2
			for i := range 2 {
				s.Do(t, "PUT", "/v1/skills/doc", e.author, reviewDoc("doc", fmt.Sprintf("round %d draft %d", round, i)), "If-Match", fmt.Sprintf(`"v%d"`, base+i))
			}
			ids := e.pending(t, "doc")
			if len(ids) != 2 {
				t.Fatalf("round %d: pending %v", round, ids)
			}
			codes := make([]int, 2)
			var wg sync.WaitGroup
			for i := range 2 {
				wg.Add(1)
				go func() { defer wg.Done(); codes[i], _ = e.approve(t, e.reviewer, ids[i]) }()
			}
			wg.Wait()
			if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
				t.Fatalf("round %d: approvals answered %v, want one 200 and one 409", round, codes)
			}
			// Clear the loser so the next round starts from one published version.
			for _, id := range e.pending(t, "doc") {
				s.Do(t, "POST", "/v1/reviews/"+id+"/reject", e.reviewer, `{"comment":"lost the race"}`)
			}
		}
	})
}

// A withdrawn skill leaves the listings and takes no new pins; existing
// pins keep working until moved.
func TestReviewWithdrawWithPins(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		e := startReview(t, engine)
		s := e.s
		s.Do(t, "POST", "/v1/skills", e.author, reviewDoc("doc", "v1"))
		e.approve(t, e.reviewer, e.pending(t, "doc")[0])
		if code, _, body := s.Do(t, "PUT", "/v1/agents/pinned/pins/doc", e.reviewer, `{"version": 1}`); code != 200 {
			t.Fatalf("pin: %d %s", code, body)
		}
		if code, _, body := s.Do(t, "POST", "/v1/skills/doc/withdraw", e.reviewer, `{}`); code != 200 {
			t.Fatalf("withdraw: %d %s", code, body)
		}
		if b := e.body(t, "coder", "doc"); b != "" {
			t.Errorf("a withdrawn skill loads for an agent following published: %s", b)
		}
		_, _, prompt := s.Do(t, "GET", "/v1/agents/coder/prompt", e.reviewer, "")
		if strings.Contains(prompt, "doc") {
			t.Errorf("a withdrawn skill is listed: %s", prompt)
		}
		if b := e.body(t, "pinned", "doc"); !strings.Contains(b, "v1") {
			t.Errorf("an existing pin of a withdrawn skill stopped working: %s", b)
		}
		if code, _, body := s.Do(t, "PUT", "/v1/agents/coder/pins/doc", e.reviewer, `{"version": 1}`); code != 409 {
			t.Errorf("a new pin of a withdrawn skill: %d %s", code, body)
		}
		_, _, usage := s.Do(t, "GET", "/v1/skills/doc/usage", e.reviewer, "")
		if !strings.Contains(usage, `"agent":"pinned","version":1,"how":["lists","pins"`) || !strings.Contains(usage, `"withdrawn":true`) {
			t.Errorf("where used: %s", usage)
		}
	})
}
