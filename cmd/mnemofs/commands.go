package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mnemofs/mnemofs/control"
	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/transfer"
	"github.com/mnemofs/mnemofs/views"
)

func importCmd() *cobra.Command {
	var to string
	var index bool
	c := &cobra.Command{
		Use:   "import SRC [--to PATH]",
		Short: "bulk-ingest a plain directory into the store",
		Args:  exactArgs(1, "SRC"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var res transfer.Result
			batchGC()
			bar := newBar("importing")
			err := run(control.Request{Op: "import", Src: abs(args[0]), To: to}, bar.progress, &res)
			bar.finish()
			if err != nil {
				return err
			}
			fmt.Printf("imported %d files (%d bytes), %d directories, %d symlinks\n", res.Files, res.Bytes, res.Dirs, res.Symlinks)
			for _, s := range res.Skipped {
				fmt.Println("skipped:", s)
			}
			if index {
				// What the next mount would do first: the index built
				// (or brought up to date) and its snapshot written.
				t0 := time.Now()
				var ix control.Indexed
				if err := run(control.Request{Op: "index"}, nil, &ix); err != nil {
					return fmt.Errorf("imported, but building the index failed (the next mount builds it): %w", err)
				}
				switch {
				case ix.Kept:
					fmt.Printf("indexed in %v\n", time.Since(t0).Round(time.Millisecond))
				case cmd.Flags().Changed("index"):
					return fail("imported, but this store keeps no index (it is encrypted): each mount builds its own")
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&to, "to", "/", "store directory to import into")
	c.Flags().BoolVar(&index, "index", true, "then build the search index and keep it, so that the next mount answers its first search at once (--index=false: leave it to the first mount; a store a mount holds indexes as it imports, an encrypted one keeps no index)")
	return c
}

func exportCmd() *cobra.Command {
	var from string
	c := &cobra.Command{
		Use:   "export DEST [--from PATH]",
		Short: "write the tree (or the part under --from) out as plain files",
		Args:  exactArgs(1, "DEST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var res transfer.Result
			bar := newBar("exporting")
			err := run(control.Request{Op: "export", Dest: abs(args[0]), From: from}, bar.progress, &res)
			bar.finish()
			if err != nil {
				return err
			}
			fmt.Printf("exported %d files (%d bytes), %d directories, %d symlinks to %s\n", res.Files, res.Bytes, res.Dirs, res.Symlinks, args[0])
			return nil
		},
	}
	c.Flags().StringVar(&from, "from", "/", "store directory to export")
	return c
}

func maintainCmd() *cobra.Command {
	var dry, asJSON bool
	var now string
	c := &cobra.Command{
		Use:   "maintain [--dry-run] [--now TIME] [--json]",
		Short: "run one lifecycle pass under meta/policy.yaml (archive, mark, purge)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if now != "" {
				t, err := time.Parse(time.RFC3339, now)
				if err != nil {
					if d, derr := time.Parse("2006-01-02", now); derr == nil {
						t = d
					} else {
						return fail("--now needs a time like 2026-12-31 or 2026-12-31T12:00:00Z, got %q", now)
					}
				}
				now = t.UTC().Format(time.RFC3339)
			}
			var r lifecycle.Report
			if err := run(control.Request{Op: "maintain", DryRun: dry, Now: now}, nil, &r); err != nil {
				return err
			}
			if asJSON {
				return printJSON(r)
			}
			if r.Skipped != "" {
				fmt.Printf("skipped: a pass is running on %s (one pass at a time on a shared store)\n", r.Skipped)
				return nil
			}
			verb := ""
			if r.DryRun {
				verb = "would "
			}
			for _, a := range r.Actions {
				to := ""
				if a.To != "" {
					to = " -> " + a.To
				}
				fmt.Printf("%s%s %s%s (%s)\n", verb, a.Kind, a.Path, to, a.Reason)
			}
			for _, n := range r.Notes {
				fmt.Printf("note: %s\n", n)
			}
			for _, e := range r.Errors {
				fmt.Printf("error: %s\n", e)
			}
			fmt.Printf("%d actions, %d errors\n", len(r.Actions), len(r.Errors))
			if len(r.Errors) > 0 {
				return fail("maintenance finished with %d errors", len(r.Errors))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "list what would be done, change nothing")
	c.Flags().StringVar(&now, "now", "", "act as if it were this time (preview the future)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func statsCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "stats [--json]",
		Short: "print the store's size and health",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var st control.Stats // the store's, and a holder's MCP sessions
			if err := run(control.Request{Op: "stats"}, nil, &st); err != nil {
				return err
			}
			if asJSON {
				return printJSON(st)
			}
			fmt.Printf("memories: %d (%d bytes) in %d directories; %d with front matter errors; %d duplicates\n",
				st.Memories, st.Bytes, st.Directories, st.Errors, st.Duplicates)
			var trees []string
			for t := range st.Trees {
				trees = append(trees, t)
			}
			sort.Strings(trees)
			for _, t := range trees {
				fmt.Printf("  %-12s %7d files %12d bytes\n", t+"/", st.Trees[t].Files, st.Trees[t].Bytes)
			}
			fmt.Printf("on disk: %d bytes (index %d, values %d, blob files %d)\n", st.Disk["lsm"]+st.Disk["vlog"]+st.Disk["blobs"],
				st.Disk["lsm"], st.Disk["vlog"], st.Disk["blobs"])
			printMCPSessions(st.MCP)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func fsckCmd() *cobra.Command {
	var repair, reindex, asJSON bool
	c := &cobra.Command{
		Use:   "fsck [--repair] [--reindex]",
		Short: "check that content, metadata and indexes agree",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if reindex {
				// The kept index goes; a running mount builds its own
				// again now (the request), any other start at its next.
				dir, err := dataDir()
				if err != nil {
					return err
				}
				if err := views.RemoveSnapshots(dir); err != nil {
					return fmt.Errorf("removing the kept index: %w", err)
				}
			}
			var r store.FsckReport
			if err := run(control.Request{Op: "fsck", Repair: repair, Reindex: reindex}, nil, &r); err != nil {
				return err
			}
			if asJSON {
				printJSON(r)
			} else {
				for _, p := range r.Problems {
					fmt.Println("problem:", p)
				}
				fmt.Printf("checked %d inodes, %d entries, %d chunks: ", r.Inodes, r.Entries, r.Chunks)
				switch {
				case r.Clean:
					fmt.Println("consistent")
				case repair:
					fmt.Printf("%d problems, %d repaired\n", len(r.Problems), r.Repaired)
				default:
					fmt.Printf("%d problems (run 'mnemofs fsck --repair' to fix)\n", len(r.Problems))
				}
			}
			if !r.Clean && !repair {
				os.Exit(1)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&repair, "repair", false, "fix what is found")
	c.Flags().BoolVar(&reindex, "reindex", false, "build the search index and views from the store again (dropping the kept index)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// bar is a progress bar that appears once work is known. One begun
// before its total was known stays a spinner, the total named in its
// description when it is known: the library's bar, told its length later,
// counts its percentage only from then on (an import of 200k files ended
// at "2%").
//
// Only on a terminal: standard error going to a file or a pipe (a log, a
// cron job's mail) gets no bar, whose redrawing would fill it with
// carriage-return lines; the command's summary line says what was done.
type bar struct {
	desc    string
	b       *progressbar.ProgressBar
	spinner bool
	named   int64 // the total a spinner's description names
	off     bool  // standard error is no terminal
}

func newBar(desc string) *bar { return &bar{desc: desc, off: !term.IsTerminal(int(os.Stderr.Fd()))} }

func (b *bar) progress(done, total int64) {
	if b.off {
		return
	}
	if b.b == nil {
		max := total
		if max <= 0 {
			max, b.spinner = -1, true
		}
		b.b = progressbar.NewOptions64(max, progressbar.OptionSetDescription(b.desc),
			progressbar.OptionSetWriter(os.Stderr), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("files"),
			progressbar.OptionThrottle(100_000_000), progressbar.OptionClearOnFinish())
	}
	switch {
	case total <= 0:
	case b.spinner:
		if b.named != total {
			b.named = total
			b.b.Describe(fmt.Sprintf("%s (of %d)", b.desc, total))
		}
	case b.b.GetMax64() != total:
		b.b.ChangeMax64(total)
	}
	b.b.Set64(done)
}

func (b *bar) finish() {
	if b.b != nil {
		b.b.Finish()
	}
}

func searchCmd() *cobra.Command {
	var user string
	var k int
	var asJSON bool
	c := &cobra.Command{
		Use:   "search [--user NAME] [-k N] [--json] QUERY",
		Short: "rank memories for a query (the same ranking as search/<query>/)",
		Long: `Rank memories for a query, as the directory search/<query>/ does in a
mount: the words of the query, and any of these filters among them:

  user:NAME          memories of this user (user, users, entities: user:NAME)
  type:TYPE          of this type (front matter type, else the top directory)
  tag:TAG            with this tag (tags, topic)
  path:PREFIX        under this path (path:semantic/projects)
  after:YYYY-MM-DD   created on or after this day
  before:YYYY-MM-DD  created before this day
  k:N                N results (default 10; -k overrides it)
  archived:true      include memories under archive/ (left out otherwise)

Each line of a .jsonl log (each entry of a .log) is ranked on its own.
Example: mnemofs search 'zermatt trip user:alice after:2026-01-01 k:3'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rs []views.Result
			q := strings.Join(args, " ")
			if strings.TrimSpace(q) == "" {
				return fail("the query is empty: give words to search for")
			}
			if _, err := views.ParseQuery(q); err != nil {
				return fail("bad query %q: %v", q, err)
			}
			if k < 1 {
				return fail("-k needs a positive number, got %d", k)
			}
			if !cmd.Flags().Changed("k") {
				k = 0 // the query's k:N, else the default
			}
			if err := run(control.Request{Op: "search", Query: q, User: user, K: k}, nil, &rs); err != nil {
				return err
			}
			if asJSON {
				return printJSON(rs)
			}
			for _, r := range rs {
				p := views.Shown(r.Path)
				if r.Line > 0 {
					p = fmt.Sprintf("%s:%d", p, r.Line) // a log's line
				}
				fmt.Printf("%2d  %7.3f  %s\n    %s\n", r.Rank, r.Score, p, r.Snippet)
			}
			return nil
		},
	}
	c.Flags().StringVar(&user, "user", "", "only this user's memories, as by-user/NAME/search/ shows them (with no mount running, ranked in an index of only what NAME may see, as a 'mount --user' ranks)")
	c.Flags().IntVarP(&k, "k", "k", views.DefaultK, "number of results")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
