// Package views builds the generated parts of the tree from the store: the
// catalog of memories behind by-user/, by-type/, by-tag/, by-date/ and
// recent/, the lexical index behind search/ and context/, meta/, and the
// guide an agent finds at the root (guide.go: MNEMOFS.md, written for the
// mount's user, options and policy; the help of search/ and context/; the
// paragraph of mnemofs agent-hint). It never imports go-fuse: fusefs asks
// it for names, filters and bytes.
//
// What it needs of the store it names itself (source.go): Source (the
// memories, their paths and rules), Changes (what the store delivered
// and what changed since a version, for the snapshot), Vectors (where
// embeddings are kept), Store (all three, what Start takes), and
// UserView (one user's view, for ForReader). *store.Store has them all.
// The files of meta/ that other packages write (maintenance.log,
// mcp.log, report.html) are given by the mount (SetMetaSources).
//
// Layers. Engine is the API and the wiring: it holds no state of its own
// but the parts below, and each of its methods waits for the queue where
// it reads (Ready) and asks one part. Each part owns its fields and its
// lock, and reaches another only through that one's methods:
//   - worker (worker.go): the queue of changes and the goroutine that
//     applies them in order; mu guards the queue and its counts, and is
//     never held while a change is applied.
//   - catalog (catalog.go, catput.go, facets.go, filter.go, paths.go,
//     catsnap.go): every memory's Entry, the facets, which memories are
//     hidden, the caches of recent/ and DirsWith; mu (read-write) guards
//     them, and the directory-path memo (dirPaths) has a mutex of its own.
//     Its methods never wait for the queue; only the worker changes it.
//   - indexer (apply.go, index.go, build.go, retry.go, warm.go): applies
//     a change (or a build) to the catalog and the lexical index, counts
//     what redaction hid (redactCounts, its own mutex) and has the
//     embedder embed it again. It runs in the worker; only its retry set
//     has a lock (retries.mu), which a timer shares.
//   - querier (query.go, qcache.go, hybrid.go, context.go, turns.go,
//     meta.go, guide.go): searches, snippets, context/, a log line's
//     result, meta/stats.json, the guide. No lock of its own: the result
//     cache has its own, and a search holds the index's lock.
//   - persister (persist.go, reconcile.go, swap.go; the file's format in
//     snapshot.go, catbase.go): loads the catalog and index from the
//     snapshot at start, writes it from a goroutine of its own, swaps a
//     build's catalog for the file's; mu is held through a whole capture
//     and write.
//   - embedder (embed.go): embeds changed memories on its own goroutine;
//     mu guards the pending set and what is embedded, and is held while
//     a memory's vectors are stored.
//
// Lock order (a lock is only taken after those before it): persister.mu;
// embedder.mu; the lexical and the vector index's locks (package search);
// catalog.mu; then dirPaths.mu, worker.mu, redactCounts.mu and
// retries.mu, which take no other. A capture holds persister.mu while it
// reads the catalog, the worker's counts, the index and the redaction
// counts; the embedder holds its mu while it stores a memory's vectors;
// a search holds an index's lock while its filter reads the catalog and
// the path memo. Nothing takes an index's lock under catalog.mu: the
// indexer changes the index before it puts the entry, and a swap adopts
// the index before it puts the catalog in place. The store is never
// called under catalog.mu, dirPaths.mu or worker.mu.
//
// Model:
//   - Engine is the store's change handler (Handle). Changes are queued
//     and applied in order by one worker, so writers never wait for
//     indexing; every public read first waits until the changes queued
//     before it are applied (Ready), so a file closed before a search is in
//     it. At start the worker reads the snapshot (persist.go) or, without
//     a usable one, builds everything from the store, reading the
//     memories a block at a time by range scans, their index terms
//     made on another goroutine than the one that adds them (build.go,
//     prepare in index.go).
//   - The catalog (an Entry per memory: users, type, tags, dates) is
//     the snapshot's mapped segment, decoded an entry at a time, under
//     the entries changed since (entryset.go, catbase.go); after a build,
//     all in memory until the first snapshot is swapped in (swap.go).
//     The facets' value sets are compressed bitmaps of inode numbers.
//     Paths are not stored: they are derived from the store when a
//     filter needs them, through a memo of directory paths that lives
//     until a move is applied.
//   - A Filter selects memories; ForReader's is what one user's view of
//     the store shows (reader.go): one index serves every user.
//   - A view is a Filter over the real tree,
//     and DirsWith gives the directories that lead to its memories
//     (cached per filter and generation), matching only the memories of
//     the smallest value set the filter names.
//   - Views in bounded time: the facets (facets.go) hold, for every user,
//     type, tag and created day, the memories that carry it, kept by the
//     worker as it applies changes. The unfiltered listings (by-user/,
//     by-type/, by-tag/, by-date/ levels) are sorted once per change of
//     their set of values, a lookup of one value (HasValue, HasDate) is a
//     map lookup, and recent/ is computed once per generation: no request
//     walks the catalog per entry it lists (CatalogScans counts the
//     walks). With memory's cap of 256 values per list per memory, one
//     file cannot make a listing long either. Walks that remain (filtered
//     Values, Recent, DirsWith, search, context/) take a context and stop
//     with its error when the kernel interrupts the request.
//   - Logs (lines.go, turns.go): each line of a .jsonl/.ndjson log and each
//     entry of a .log is its own document with its own metadata
//     (memory.ParseLine), kept per line (Lines, Line) for filters and for
//     views built on them; a log's Entry carries the union of its lines'
//     users and tags and the span of their dates. A result for a line is
//     that line with its neighbours (LineResult), and context/ quotes the
//     turns with the session's summary.md.
//   - With a model (SetEncoder, embed.go) changed memories are embedded in
//     the background and search fuses lexical and vector ranks
//     (hybrid.go); without one, search is lexical only.
//   - The catalog and index persist (persist.go, snapshot.go,
//     reconcile.go): a snapshot file, written at a version after which
//     nothing delivered is unapplied (store.Settled), is read at start
//     and brought up to date from store.ChangedSince through the same
//     apply as live changes; anything that does not fit (another program,
//     store or user, a changed policy, a bad checksum) builds from the
//     store instead.
//   - Methods that run inside a search (MatchIno, entry) never wait for the
//     queue: the worker may need the index lock the search holds.
package views
