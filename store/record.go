package store

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/store/internal/access"
)

// Record is what the store knows about a memory beyond its bytes: the
// metadata it declares and the system metadata kept for it. It is never
// written into the file.
type Record struct {
	Meta         memory.Meta `json:"meta"`
	SHA256       string      `json:"sha256,omitempty"`
	Version      int         `json:"version"`
	Modified     int64       `json:"modified,omitempty"`      // last content change, unix ns
	LastAccessed int64       `json:"last_accessed,omitempty"` // unix ns
	AccessCount  int64       `json:"access_count,omitempty"`
	Error        string      `json:"error,omitempty"` // broken front matter
	BodyOffset   int         `json:"body_offset,omitempty"`
	HashState    []byte      `json:"hash_state,omitempty"` // sha256 state at HashSize (large files)
	HashSize     uint64      `json:"hash_size,omitempty"`
	Owner        string      `json:"owner,omitempty"`         // the user whose mount created it (isolation.go)
	Unreadable   bool        `json:"unreadable,omitempty"`    // its metadata block could not be read (isolation.go)
	RelatedInos  []uint64    `json:"related_inos,omitempty"`  // Meta.Related resolved at commit (links.go); 0: not a file here
	Cold         bool        `json:"cold,omitempty"`          // marked cold by maintenance (MarkCold)
	DuplicateOf  uint64      `json:"duplicate_of,omitempty"`  // an earlier memory with the same bytes (MarkDuplicate)
	LineUsers    []string    `json:"line_users,omitempty"`    // logs: the users its lines name (loglines.go)
	LinePublic   bool        `json:"line_public,omitempty"`   // logs: some line names no user
	LinesAt      uint64      `json:"lines_at,omitempty"`      // logs: the lines before this offset were read
	LinesUnknown bool        `json:"lines_unknown,omitempty"` // logs: too large to read line by line
	Lineage      uint64      `json:"lineage,omitempty"`       // the inode the memory was first created as, when a save moved it on (saves.go); 0: this one
	Successor    uint64      `json:"successor,omitempty"`     // the inode a save moved the memory on to (saves.go)
	SavedOver    string      `json:"saved_over,omitempty"`    // the sha256 of the version a save by create kept, until its first commit (saves.go)
	Trashed      int64       `json:"trashed,omitempty"`       // when it was moved to the trash
	TrashedFrom  string      `json:"trashed_from,omitempty"`
}

func (r *Record) applyParse(p memory.Parsed) {
	r.Meta, r.BodyOffset, r.Unreadable = p.Meta, p.BodyOffset, p.Unreadable
	r.Error = ""
	if p.Err != nil {
		r.Error = p.Err.Error()
	}
}

func putRecord(t backend.Txn, ino uint64, r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return t.Set(backend.MetaKey(ino), b)
}

func getRecord(t backend.Txn, ino uint64) (*Record, error) {
	b, err := t.Get(backend.MetaKey(ino))
	if errors.Is(err, backend.ErrNotFound) {
		return &Record{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeRecord(ino, b)
}

// decodeRecord decodes a stored record.
func decodeRecord(ino uint64, b []byte) (*Record, error) {
	r := &Record{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("store: corrupt metadata of inode %d: %v", ino, err)
	}
	return r, nil
}

// storedRecord loads the record of ino as stored, through the record
// cache. Writers of a record change it in a copy they store, then call
// s.recs.Set or Forget.
func (s *Store) storedRecord(ino uint64) (*Record, error) {
	if c, ok, epoch := s.recs.Get(ino); ok {
		return &c, nil
	} else {
		var r *Record
		err := s.kv.View(func(t backend.Txn) error {
			var err error
			r, err = getRecord(t, ino)
			return err
		})
		if err != nil {
			return nil, err
		}
		s.recs.Fill(ino, *r, epoch)
		return r, nil
	}
}

// storedRecordLocked is storedRecord taking mu.
func (s *Store) storedRecordLocked(ino uint64) (*Record, error) {
	s.mu.Lock()
	defer s.unlock()
	return s.storedRecord(ino)
}

// record loads the record of ino with pending access stats applied (for
// readers: a writer storing it would count them twice; see storedRecord).
func (s *Store) record(ino uint64) (*Record, error) {
	r, err := s.storedRecord(ino)
	if err != nil {
		return nil, err
	}
	return s.withAccess(ino, r), nil
}

// withAccess applies to r, the record of ino, the access stats not
// stored yet.
func (s *Store) withAccess(ino uint64, r *Record) *Record {
	if a, ok := s.access.Pending(ino); ok {
		r.LastAccessed = max(r.LastAccessed, a.Last)
		r.AccessCount += a.Count
	}
	return r
}

// Record returns the record of ino.
func (s *Store) Record(ino uint64) (*Record, error) { return s.record(ino) }

func (s *Store) touch(ino uint64) {
	if s.opts.ReadOnly {
		return // a read-only store records nothing, accesses included
	}
	s.access.Touch(ino, s.now().UnixNano())
}

// flushAccess persists pending access statistics (access.Counts.Flush).
func (s *Store) flushAccess() error { return s.access.Flush(s.storeAccess) }

// storeAccess adds the pending access statistics of inos to their records
// in one transaction.
func (s *Store) storeAccess(part []uint64, pending map[uint64]access.Stat) error {
	s.mu.Lock()
	err := s.kv.Update(func(t backend.Txn) error {
		if m, ok := t.(backend.ManyGetter); ok {
			// Their inodes and records in one request, not two
			// round trips each (etcd), while mu is held.
			keys := make([][]byte, 0, 2*len(part))
			for _, ino := range part {
				keys = append(keys, backend.InodeKey(ino), backend.MetaKey(ino))
			}
			if _, _, err := m.GetMany(keys); err != nil {
				return err
			}
		}
		for _, ino := range part {
			if _, err := t.Get(backend.InodeKey(ino)); errors.Is(err, backend.ErrNotFound) {
				continue // removed meanwhile
			}
			r, err := getRecord(t, ino)
			if err != nil {
				return err
			}
			a := pending[ino]
			r.LastAccessed = max(r.LastAccessed, a.Last)
			r.AccessCount += a.Count
			if err := putRecord(t, ino, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		for _, ino := range part {
			s.recs.Forget(ino)
		}
	}
	s.unlock()
	return err
}

// Info is a memory as listed in meta/index.json and the xattrs.
type Info struct {
	Path string `json:"path"`
	// PathBase64 is Path exactly, for a name that is not UTF-8 (JSON
	// would replace its bytes with U+FFFD): ExactPath.
	PathBase64   string         `json:"path_base64,omitempty"`
	Ino          uint64         `json:"ino"`
	Type         string         `json:"type"`
	Size         uint64         `json:"size"`
	Created      time.Time      `json:"created"`
	Modified     time.Time      `json:"modified"`
	LastAccessed *time.Time     `json:"last_accessed,omitempty"`
	AccessCount  int64          `json:"access_count"`
	SHA256       string         `json:"sha256"`
	Version      int            `json:"version"`
	ID           string         `json:"id,omitempty"`
	Users        []string       `json:"users,omitempty"`
	Entities     []string       `json:"entities,omitempty"`
	Tags         []string       `json:"tags,omitempty"`
	Importance   *float64       `json:"importance,omitempty"`
	Expires      *time.Time     `json:"expires,omitempty"`
	Related      []string       `json:"related,omitempty"`
	Extra        map[string]any `json:"extra,omitempty"`
	Error        string         `json:"error,omitempty"`
	Cold         bool           `json:"cold,omitempty"`
	DuplicateOf  string         `json:"duplicate_of,omitempty"`
	// BodyOffset is where the text after the front matter starts.
	BodyOffset int `json:"-"`
	// Lineage is the memory's stable id: the inode it was first created
	// as, kept across atomic saves (saves.go).
	Lineage uint64 `json:"lineage"`
	// unsure: nobody can tell whose the memory is (isolation.go).
	unsure bool
	// Ignored: the policy's ignore rules match the path; the file is not
	// a memory (internal/rules).
	Ignored bool `json:"-"`
}

// Unsure reports whether nobody can tell whose the memory is: it has no
// owner and its metadata could not be read (isolation.go), so no user
// sees it.
func (in Info) Unsure() bool { return in.unsure }

// info builds the Info of a regular file from its inode, path and record.
func info(i *Inode, p string, r *Record) Info {
	in := Info{Path: p, PathBase64: ExactPath(p), Ino: i.Ino, Size: i.Size, SHA256: r.SHA256, Version: r.Version,
		AccessCount: r.AccessCount, ID: r.Meta.ID, Users: shownUsers(r.audience()), Entities: r.Meta.Entities,
		Tags: r.Meta.Tags, Importance: r.Meta.Importance, Expires: r.Meta.Expires,
		Related: r.Meta.Related, Extra: r.Meta.Extra, Error: r.Error, BodyOffset: r.BodyOffset,
		Created: time.Unix(0, i.Btime).UTC(), Modified: time.Unix(0, i.Mtime).UTC(), unsure: r.unsure(),
		Lineage: r.lineage(i.Ino)}
	if r.Meta.Created != nil {
		in.Created = *r.Meta.Created
	}
	if r.LastAccessed != 0 {
		t := time.Unix(0, r.LastAccessed).UTC()
		in.LastAccessed = &t
	}
	in.Type = r.Meta.Type
	if top := TopDir(p); in.Type == "" && strings.Contains(strings.TrimPrefix(path.Clean("/"+p), "/"), "/") {
		in.Type = top // the tree it is in; a file at the root is in none
	}
	return in
}

// ExactPath is p in base64 when p is not valid UTF-8 (JSON cannot carry
// its bytes), else "".
func ExactPath(p string) string {
	if utf8.ValidString(p) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(p))
}

// TopDir is the first component of a store path ("/episodic/a.md" → "episodic").
func TopDir(p string) string {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	top, _, _ := strings.Cut(p, "/")
	return top
}

// Info returns the metadata of the memory at ino.
func (s *Store) Info(ino uint64) (Info, error) {
	i, err := s.Attr(ino)
	if err != nil {
		return Info{}, err
	}
	r, err := s.record(ino)
	if err != nil {
		return Info{}, err
	}
	return s.infoOf(&i, r)
}

// infoOf is the Info of the node i with record r.
func (s *Store) infoOf(i *Inode, r *Record) (Info, error) {
	if i.IsReg() && !s.visibleRecord(r) {
		return Info{}, syscall.ENOENT
	}
	p, err := s.pathOf(i)
	if err != nil {
		return Info{}, err
	}
	in := info(i, p, r)
	s.partialInfo(&in)
	in.Ignored = i.IsReg() && s.Ignored(p, false)
	in.Related = s.relatedPaths(r, nil)
	s.maintenanceMarks(&in, r, nil)
	return in, nil
}
