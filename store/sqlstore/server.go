package sqlstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/loadout/loadout/store"
)

// TokenPrefix starts every token secret.
const TokenPrefix = "lo_"

// lastUsedEvery is how often at most TokenBySecret records a token's use:
// authenticating is a read, and only about once a minute also a write.
const lastUsedEvery = time.Minute

// CheckScopes checks token scopes: store.CheckScopes, the one check
// token creation and authentication share.
func CheckScopes(scopes []string) error { return store.CheckScopes(scopes) }

func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a token and returns its secret: "lo_" and 32 random
// bytes in unpadded base64url. Only the secret's sha256 is stored.
func (s *Store) CreateToken(ctx context.Context, name string, scopes []string) (string, store.Token, error) {
	if err := CheckScopes(scopes); err != nil {
		return "", store.Token{}, err
	}
	var dedup []string
	seen := map[string]bool{}
	for _, sc := range scopes {
		if !seen[sc] {
			seen[sc] = true
			dedup = append(dedup, sc)
		}
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", store.Token{}, internal("token secret", err)
	}
	secret := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	scopesJSON, _ := json.Marshal(dedup)
	t := now()
	tok := store.Token{ID: newID()[:12], Name: name, Scopes: dedup, CreatedAt: fromMicros(t)}
	err := s.writeTokens(ctx, func(c conn) error {
		_, err := c.exec(`INSERT INTO tokens (id, name, secret_sha256, scopes, created_at, revoked) VALUES ($1, $2, $3, $4, $5, $6)`,
			tok.ID, name, hashSecret(secret), string(scopesJSON), t, false)
		return err
	})
	if err != nil {
		return "", store.Token{}, err
	}
	return secret, tok, nil
}

const tokenCols = `id, name, scopes, created_at, last_used`

func scanToken(scan func(...any) error) (store.Token, error) {
	var tok store.Token
	var scopes string
	var created int64
	var last *int64
	if err := scan(&tok.ID, &tok.Name, &scopes, &created, &last); err != nil {
		return tok, err
	}
	if err := json.Unmarshal([]byte(scopes), &tok.Scopes); err != nil {
		return tok, fmt.Errorf("token %s: scopes: %w", tok.ID, err)
	}
	tok.CreatedAt = fromMicros(created)
	if last != nil {
		t := fromMicros(*last)
		tok.LastUsed = &t
	}
	return tok, nil
}

// TokenBySecret finds the live token a secret belongs to, by the secret's
// hash, and records its use (at most once a minute per token).
func (s *Store) TokenBySecret(ctx context.Context, secret string) (*store.Token, error) {
	nf := &store.Error{Code: store.NotFound, Field: "token", Message: "no such token (or it was revoked)"}
	if !strings.HasPrefix(secret, TokenPrefix) {
		return nil, nf
	}
	var tok store.Token
	found := false
	err := s.read(ctx, func(c conn) error {
		rows, err := c.query(`SELECT `+tokenCols+` FROM tokens WHERE secret_sha256 = $1 AND revoked = $2`, hashSecret(secret), false)
		if err != nil {
			return err
		}
		defer rows.Close()
		if rows.Next() {
			if tok, err = scanToken(rows.Scan); err != nil {
				return err
			}
			found = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, nf
	}
	t := time.Now()
	if tok.LastUsed == nil || t.Sub(*tok.LastUsed) >= lastUsedEvery {
		us := t.UnixMicro()
		err := s.quiet(ctx, func(c conn) error {
			// The condition keeps concurrent requests from all writing.
			_, err := c.exec(`UPDATE tokens SET last_used = $1 WHERE id = $2 AND (last_used IS NULL OR last_used <= $3)`,
				us, tok.ID, us-lastUsedEvery.Microseconds())
			return err
		})
		if err != nil {
			return nil, err
		}
		lu := fromMicros(us)
		tok.LastUsed = &lu
	}
	return &tok, nil
}

// Tokens lists the live (unrevoked) tokens, newest first, without secrets.
func (s *Store) Tokens(ctx context.Context) ([]store.Token, error) {
	out := []store.Token{}
	err := s.read(ctx, func(c conn) error {
		rows, err := c.query(`SELECT `+tokenCols+` FROM tokens WHERE revoked = $1 ORDER BY created_at DESC, id`, false)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			tok, err := scanToken(rows.Scan)
			if err != nil {
				return err
			}
			out = append(out, tok)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RevokeToken revokes a token for good: its secret no longer
// authenticates. Revoking a revoked token changes nothing; an unknown id
// is not_found.
func (s *Store) RevokeToken(ctx context.Context, id string) error {
	return s.writeTokens(ctx, func(c conn) error {
		res, err := c.exec(`UPDATE tokens SET revoked = $1 WHERE id = $2`, true, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return &store.Error{Code: store.NotFound, Field: "id", Message: fmt.Sprintf("no token has the id %q", id)}
		}
		return nil
	})
}
