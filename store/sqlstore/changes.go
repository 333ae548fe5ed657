package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout/loadout/store"
)

// NotifyChannel is the PostgreSQL channel every write to skills, files,
// overrides or tokens notifies, in its own transaction. The payload is the
// schema the store lives in (current_schema()), a space, and the id of the
// store instance that wrote (Store.Instance), so that a listener can
// ignore other schemas of the database and its own instance's writes,
// which the instance signals directly; for tokens, another space and
// ChangeTokens follow.
const NotifyChannel = "loadout_changes"

// What changed, as a Listener reports it.
const (
	// ChangeSkills: skills, their files or overrides (Changes).
	ChangeSkills = "skills"
	// ChangeTokens: a token was created or revoked (TokenChanges).
	ChangeTokens = "tokens"

	// ChangeBlocks: a block of the kill switch was added or removed
	// (BlockChanges).
	ChangeBlocks = "blocks"
)

// PollInterval is how often a SQLite change feed looks at the database's
// data_version.
const PollInterval = 200 * time.Millisecond

// A Listener watches for the changes other instances commit, for an
// engine whose notifications need a connection of their own (PostgreSQL's
// LISTEN; the postgres package installs one). It returns once it is
// listening, or with an error; from then on it calls notify with the kind
// (ChangeSkills, ChangeTokens) of every change another instance commits to
// this store's schema (instance is this store's id: the payload of its own
// notifications), and, having reconnected after losing its connection,
// once with each kind in case it missed one. It keeps going until ctx
// ends, and then closes done.
type Listener func(ctx context.Context, instance string, notify func(kind string)) (done <-chan struct{}, err error)

// SetListener installs the listener Changes uses on engines that need one.
// Set it before calling Changes.
func (s *Store) SetListener(l Listener) { s.feed.listener = l }

// SetPollDB gives SQLite's change feeds a database of their own to poll
// on: each feed holds one connection for as long as it runs, which must
// not come out of a bounded pool (SetMaxOpenConns) the requests share.
// The store owns db: Close closes it. Without it the feeds poll on the
// store's own database. Set it before calling Changes.
func (s *Store) SetPollDB(db *sql.DB) { s.pollDB = db }

func (s *Store) pollConn(ctx context.Context) (*sql.Conn, error) {
	if s.pollDB != nil {
		return s.pollDB.Conn(ctx)
	}
	return s.db.Conn(ctx)
}

// Instance returns this store's random id, the one its writes carry to the
// other instances (see NotifyChannel).
func (s *Store) Instance() string { return s.feed.instance }

// kind is what a feed reports: an index into the feed's counters.
type kind int

const (
	kindSkills kind = iota
	kindTokens

	// kindBlocks: the kill switch's blocks (blocks.go).
	kindBlocks

	nkinds
	// quietKind marks writes no feed reports (receipts, a token's last
	// use, the collection of blobs).
	quietKind kind = -1
)

func (k kind) String() string {
	switch k {
	case kindTokens:
		return ChangeTokens
	case kindBlocks:
		return ChangeBlocks
	}
	return ChangeSkills
}

// feed is the store's side of Changes: the subscribers to signal after a
// local commit, and what Close must end.
type feed struct {
	instance string
	listener Listener
	// seq is, per kind, the highest change counter this instance has
	// committed and signalled (SQLite): a poller that finds the counter at
	// or below it has nothing new to tell.
	seq [nkinds]atomic.Int64

	mu sync.Mutex
	// subs are the feeds: the kind each reports, and whether it leaves out
	// this instance's own writes (ChangesByOthers).
	subs map[chan struct{}]sub
	// local are the skill change counters of this instance's latest
	// commits (SQLite), sorted, at most maxLocal of them; localFloor is the
	// highest one dropped. A poller of ChangesByOthers tells of a move of
	// the counter only when some of it is not in local.
	local      []int64
	localFloor int64
	closed     bool
	closing    context.Context
	stop       context.CancelFunc
	running    sync.WaitGroup
}

func (f *feed) init() {
	f.instance = newID()[:16]
	f.subs = map[chan struct{}]sub{}
	f.closing, f.stop = context.WithCancel(context.Background())
}

// committed records a local commit of a kind (seq: the counter it wrote,
// if any) and signals every subscriber to that kind.
func (f *feed) committed(k kind, seq int64) {
	for {
		cur := f.seq[k].Load()
		if seq <= cur || f.seq[k].CompareAndSwap(cur, seq) {
			break
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch, sb := range f.subs {
		if sb.kind == k && !sb.others {
			send(ch)
		}
	}
}

// close ends every feed and waits for their goroutines.
func (f *feed) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.stop()
	f.running.Wait()
}

func send(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// committing records the change counter a local write is about to commit
// (SQLite), before the commit, so that no poller can see the counter move
// before it is known as local.
func (f *feed) committing(seq int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, _ := slices.BinarySearch(f.local, seq)
	f.local = slices.Insert(f.local, i, seq)
	if len(f.local) > maxLocal {
		f.localFloor = max(f.localFloor, f.local[0])
		f.local = slices.Delete(f.local, 0, 1)
	}
}

// abandoned undoes committing after a commit failed. The counter value
// may then be committed by another instance, so a poller whose range
// holds it treats the whole range as another instance's change (at worst
// a refresh too many, never a change missed).
func (f *feed) abandoned(seq int64) {
	if seq <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if i, ok := slices.BinarySearch(f.local, seq); ok {
		f.local = slices.Delete(f.local, i, i+1)
	}
	f.localFloor = max(f.localFloor, seq)
}

// maxLocal bounds feed.local: a poller more than this many local commits
// behind treats the gap as another instance's change, which costs a
// refresh and loses nothing.
const maxLocal = 4096

// othersIn reports whether any change counter in (from, to] was committed
// by another instance: one this instance did not commit itself.
func (f *feed) othersIn(from, to int64) bool {
	if to <= from {
		return to != from // the counter went back: a restored database
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.localFloor > from {
		return true // some of the local commits in the range are forgotten
	}
	lo, _ := slices.BinarySearch(f.local, from+1)
	hi, _ := slices.BinarySearch(f.local, to+1)
	return int64(hi-lo) < to-from
}

// sub is one subscriber of the feed.
type sub struct {
	kind   kind
	others bool // only other instances' writes (ChangesByOthers)
}

// Changes returns a channel that receives after every committed write to
// skills, files or overrides, by this instance (at once, after the commit)
// or by any other sharing the database: on PostgreSQL through
// LISTEN/NOTIFY (SetListener; postgres.Open installs it), on SQLite by
// polling PRAGMA data_version every PollInterval and then the counter
// every such write bumps. Writes of tokens (see TokenChanges) and
// receipts do not count.
// Sends coalesce: the channel holds at most one. It closes when ctx ends
// or the store is closed.
func (s *Store) Changes(ctx context.Context) (<-chan struct{}, error) {
	return s.subscribe(ctx, kindSkills, false)
}

// ChangesByOthers is Changes without this instance's own writes: it sends
// after every committed write by any other instance sharing the database
// (another process, or another Store opened on it). A server that brings
// its catalog up to date itself after each of its writes follows it, so
// that no write is applied twice.
func (s *Store) ChangesByOthers(ctx context.Context) (<-chan struct{}, error) {
	return s.subscribe(ctx, kindSkills, true)
}

// TokenChanges is Changes for tokens: the channel receives after a token
// is created or revoked, by this instance (after the commit) or another
// (PostgreSQL: the same channel, ChangeTokens in the payload; SQLite: a
// counter of its own in change_seq). A token's last use is not a change.
func (s *Store) TokenChanges(ctx context.Context) (<-chan struct{}, error) {
	return s.subscribe(ctx, kindTokens, false)
}

func (s *Store) subscribe(ctx context.Context, k kind, others bool) (<-chan struct{}, error) {
	f := &s.feed
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, &store.Error{Code: store.Internal, Message: "store: change feed: the store is closed"}
	}
	f.running.Add(1)
	f.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(f.closing, cancel)
	ch := make(chan struct{}, 1)
	var done <-chan struct{}
	var err error
	switch {
	case s.d.changedCounts:
		done, err = s.poll(ctx, k, others, func() { send(ch) })
	case f.listener != nil:
		done, err = f.listener(ctx, f.instance, func(got string) {
			if got == k.String() {
				send(ch)
			}
		})
	default:
		err = errors.New("no listener for " + s.d.Name + ": open the store with postgres.Open, or call SetListener")
	}
	if err != nil {
		unhook()
		cancel()
		f.running.Done()
		return nil, internal("change feed", err)
	}
	f.mu.Lock()
	f.subs[ch] = sub{k, others}
	f.mu.Unlock()
	go func() {
		defer f.running.Done()
		<-done
		unhook()
		cancel()
		f.mu.Lock()
		delete(f.subs, ch)
		f.mu.Unlock()
		close(ch)
	}()
	return ch, nil
}

// poll is SQLite's listener: on a connection of its own (data_version is
// per connection: it moves when another connection commits), it reads
// PRAGMA data_version every PollInterval, and when that moved, the change
// counter of kind k. A counter past what this instance has signalled
// itself is another instance's change.
func (s *Store) poll(ctx context.Context, k kind, others bool, notify func()) (<-chan struct{}, error) {
	c, err := s.pollConn(ctx)
	if err != nil {
		return nil, err
	}
	var dv, last int64
	if dv, err = dataVersion(ctx, c); err == nil {
		last, err = changeSeq(ctx, c, k)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if c != nil {
				c.Close()
			}
		}()
		t := time.NewTicker(PollInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			fresh := false
			if c == nil {
				if c, err = s.pollConn(ctx); err != nil {
					c = nil
					continue
				}
				fresh = true
			}
			v, err := dataVersion(ctx, c)
			if err != nil {
				c.Close()
				c = nil
				continue
			}
			if v == dv && !fresh {
				continue
			}
			dv = v
			n, err := changeSeq(ctx, c, k)
			if err != nil {
				c.Close()
				c = nil
				continue
			}
			if n != last {
				if others && s.feed.othersIn(last, n) || !others && n > s.feed.seq[k].Load() {
					notify()
				}
				last = n
			}
		}
	}()
	return done, nil
}

func dataVersion(ctx context.Context, c *sql.Conn) (int64, error) {
	var v int64
	err := c.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v)
	return v, err
}

func changeSeq(ctx context.Context, c *sql.Conn, k kind) (int64, error) {
	q := `SELECT n FROM change_seq WHERE id = 1`
	if k == kindTokens {
		q = `SELECT tokens FROM change_seq WHERE id = 1`
	}
	if k == kindBlocks {
		q = `SELECT blocks FROM change_seq WHERE id = 1`
	}
	var n int64
	err := c.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}
