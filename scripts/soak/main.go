// Command soak simulates months of an agent's use of a store at
// accelerated time, with one maintenance pass per simulated day, and
// reports how the store grows: bytes on disk, files per tree, the archive's
// share, and bytes on disk per stored byte. At the end it checks that every
// version of every memory ever acknowledged (closed) can still be read:
// live, moved into the archive, or kept in its history.
//
// Each simulated day: a chat session under episodic/sessions/ (turns with
// a random importance), a rewrite of one knowledge note (semantic/
// knowledge_base/, versioned), a working scratchpad (working/), now and
// then a duplicate, a new version of a skill, a removed memory, and reads
// that keep some old sessions warm. The store runs in process on a real
// Badger directory with a simulated clock (a mount cannot run months in
// minutes):
//
//	go run ./scripts/soak -days 180 -dir /var/tmp/soak
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/store"
)

var (
	days   = flag.Int("days", 180, "simulated days")
	dir    = flag.String("dir", "", "work directory (a temporary one if empty; removed at the end unless -keep)")
	turns  = flag.Int("turns", 20, "turns per daily session")
	every  = flag.Int("report", 15, "report every N days")
	keep   = flag.Bool("keep", false, "keep the work directory")
	pass   = flag.Int("pass", 0, "instead of a soak: import this many memories and time one maintenance pass over them")
	gen    = flag.String("gen", "", "instead of a soak: write the tree of -pass N memories into this directory")
	probe_ = flag.String("probe", "", "instead of a soak: measure a small write+read in this directory (of a mount) until interrupted or -for")
	probeD = flag.Duration("for", time.Hour, "with -probe: how long")
	words  = strings.Fields("the agent user plan meeting project budget travel deploy bug fix review design memory note idea lunch weather code test release customer")
	origin = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
)

// acked is a content a memory held when it was closed.
type acked struct {
	ino uint64
	sum string
}

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func run() error {
	if *gen != "" {
		return genTree(*gen, *pass)
	}
	if *probe_ != "" {
		return probeMount(*probe_, *probeD)
	}
	work := *dir
	if work == "" {
		d, err := os.MkdirTemp("", "mnemofs-soak-")
		if err != nil {
			return err
		}
		work = d
	}
	if !*keep {
		defer os.RemoveAll(work)
	}
	if *pass > 0 {
		return timePass(work, *pass)
	}
	clock := origin
	kv, err := backend.OpenBadger(filepath.Join(work, "db"), backend.Options{})
	if err != nil {
		return err
	}
	defer kv.Close()
	st, err := store.Open(kv, store.Options{Now: func() time.Time { return clock }, BlobDir: filepath.Join(work, "blobs"), ScratchAge: -1})
	if err != nil {
		return err
	}
	defer st.Close()
	r := rand.New(rand.NewPCG(1, 2))
	var all []acked
	write := func(p string, data []byte) (uint64, error) {
		d, name := filepath.Split(p)
		dino, err := mkdirs(st, d)
		if err != nil {
			return 0, err
		}
		var ino uint64
		if i, err := st.Lookup(dino, name); err == nil {
			ino = i.Ino
			if err := st.Open(ino, false); err != nil {
				return 0, err
			}
			if err := st.Truncate(ino, 0); err != nil {
				return 0, err
			}
		} else {
			i, err := st.Create(dino, name, 0o644, store.Owner{})
			if err != nil {
				return 0, err
			}
			ino = i.Ino
			if err := st.Open(ino, false); err != nil {
				return 0, err
			}
		}
		if _, err := st.WriteAt(ino, data, 0); err != nil {
			return 0, err
		}
		if err := st.Release(ino); err != nil {
			return 0, err
		}
		all = append(all, acked{ino, sum(data)})
		return ino, nil
	}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		return b.String()
	}
	fmt.Println("| day | disk MiB | stored MiB | disk per stored byte | episodic | working | semantic | archive | archive share | packed files | pack bytes per packed byte | actions |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	var sessions []string
	for day := 1; day <= *days; day++ {
		s := fmt.Sprintf("/episodic/sessions/%s", clock.Format("2006-01-02"))
		sessions = append(sessions, s)
		for t := 1; t <= *turns; t++ {
			// Most turns matter little (importance skewed low), a few a lot.
			body := fmt.Sprintf("---\nimportance: %.2f\nspeaker: %s\n---\n%s\n", math.Pow(r.Float64(), 3), []string{"user", "agent"}[t%2], text(20+r.IntN(40)))
			if _, err := write(fmt.Sprintf("%s/turn-%03d.md", s, t), []byte(body)); err != nil {
				return err
			}
		}
		k := fmt.Sprintf("/semantic/knowledge_base/topic-%02d.md", r.IntN(30))
		if _, err := write(k, []byte("# "+k+"\n"+text(150)+"\n")); err != nil {
			return err
		}
		if _, err := write(fmt.Sprintf("/working/task-%d/notes.md", day), []byte(text(80))); err != nil {
			return err
		}
		if day%5 == 0 { // a duplicate of today's first turn
			b, err := readPath(st, s+"/turn-001.md")
			if err != nil {
				return err
			}
			if _, err := write(fmt.Sprintf("/semantic/copies/day-%d.md", day), b); err != nil {
				return err
			}
		}
		if day%7 == 0 { // a new version of a skill
			if _, err := write(fmt.Sprintf("/semantic/skills/deploy-%d.md", day), []byte("---\nid: deploy\n---\n"+text(60))); err != nil {
				return err
			}
		}
		if day%3 == 0 { // something removed: to the trash, purged after retention
			if _, err := write("/semantic/tmp-note.md", []byte(text(30))); err != nil {
				return err
			}
			d, _ := st.Resolve("/semantic")
			if _, err := st.Remove(d, "tmp-note.md"); err != nil {
				return err
			}
		}
		for range 3 { // keep a few old sessions warm
			old := sessions[r.IntN(len(sessions))]
			if _, err := readPath(st, old+"/turn-002.md"); err != nil && !os.IsNotExist(err) {
				_ = err // archived meanwhile: fine
			}
		}
		clock = clock.Add(24 * time.Hour)
		rep, err := lifecycle.Maintain(st, lifecycle.Options{})
		if err != nil {
			return err
		}
		if len(rep.Errors) > 0 {
			return fmt.Errorf("day %d: maintenance errors: %v", day, rep.Errors)
		}
		if day%*every == 0 || day == *days {
			if err := report(st, day, len(rep.Actions)); err != nil {
				return err
			}
		}
	}
	return verify(st, all)
}

// mkdirs makes the directories of p.
func mkdirs(st *store.Store, p string) (uint64, error) {
	ino := uint64(store.RootIno)
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		if part == "" {
			continue
		}
		if i, err := st.Lookup(ino, part); err == nil {
			ino = i.Ino
			continue
		}
		i, err := st.Mkdir(ino, part, 0o755, store.Owner{})
		if err != nil {
			return 0, err
		}
		ino = i.Ino
	}
	return ino, nil
}

func readPath(st *store.Store, p string) ([]byte, error) {
	ino, err := st.Resolve(p)
	if err != nil {
		return nil, os.ErrNotExist
	}
	return readIno(st, ino)
}

func readIno(st *store.Store, ino uint64) ([]byte, error) {
	a, err := st.Attr(ino)
	if err != nil {
		return nil, err
	}
	if err := st.Open(ino, true); err != nil {
		return nil, err
	}
	defer st.Release(ino)
	b := make([]byte, a.Size)
	n, err := st.ReadAt(ino, b, 0)
	return b[:n], err
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// report prints one row of the growth table.
func report(st *store.Store, day, actions int) error {
	s, err := st.Stats()
	if err != nil {
		return err
	}
	disk := s.Disk["lsm"] + s.Disk["vlog"] + s.Disk["blobs"]
	files := func(t string) int { return s.Trees[t].Files }
	var archived, stored uint64
	for t, tr := range s.Trees {
		stored += tr.Bytes
		if t == "archive" {
			archived = tr.Bytes
		}
	}
	share := 0.0
	if stored > 0 {
		share = float64(archived) / float64(stored)
	}
	ps, err := st.Packs()
	if err != nil {
		return err
	}
	fmt.Printf("| %d | %.1f | %.1f | %.2f | %d | %d | %d | %d | %.0f%% | %d | %.2f | %d |\n", day, float64(disk)/(1<<20), float64(stored)/(1<<20),
		float64(disk)/float64(max(stored, 1)), files("episodic"), files("working"), files("semantic"), files("archive"), 100*share,
		ps.Files, float64(ps.Compressed)/float64(max(ps.RawBytes, 1)), actions)
	return nil
}

// verify checks that every acknowledged content is readable: as the
// memory's current content or as one of its kept versions.
func verify(st *store.Store, all []acked) error {
	byIno := map[uint64][]string{}
	for _, a := range all {
		byIno[a.ino] = append(byIno[a.ino], a.sum)
	}
	lost, purged, checked := 0, 0, 0
	for ino, sums := range byIno {
		have := map[string]bool{}
		if b, err := readIno(st, ino); err == nil {
			have[sum(b)] = true
		} else {
			purged++ // only trash past its retention is ever deleted
			continue
		}
		vs, err := st.Versions(ino)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if b, err := st.VersionContent(ino, v.N); err == nil {
				have[sum(b)] = true
			}
		}
		for _, s := range sums {
			checked++
			if !have[s] {
				lost++
			}
		}
	}
	fmt.Printf("\nverified %d acknowledged contents of %d memories: %d not readable; %d memories purged from the trash (by policy)\n",
		checked, len(byIno)-purged, lost, purged)
	if lost > 0 {
		return fmt.Errorf("%d acknowledged contents are not readable", lost)
	}
	return nil
}
