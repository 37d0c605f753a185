// Package report renders the store as one self-contained HTML page:
// growth over time, tier shares, top tags and users, the association
// graph of related links, maintenance actions over time, latency
// percentiles and the health warnings of meta/stats.json. It is what
// `mnemofs report` prints and what meta/report.html serves.
//
// Model. Collect walks the memories a reader may see (store.MemoriesFor
// with the reader's filter, so a store open for a user or a restricted
// reader sees only its own) into a Data of counts, paths, names, tags and
// users; Render turns a Data into HTML. Neither ever reads a memory's
// content: the page shows metadata and counts only, never body text.
//
// Invariants.
//   - The page needs nothing outside itself: every chart is SVG drawn here
//     (the graph's layout is computed in Go), the little script and styles
//     are inline, and a Content-Security-Policy meta tag forbids every
//     fetch (default-src 'none'), so a browser makes no request.
//   - Everything that came from the store (paths, tags, users, log lines)
//     is HTML-escaped and made valid UTF-8 before it is written.
//   - The association graph is capped (Options.MaxNodes): whole groups,
//     largest first, then the memories nearest the most-linked one of the
//     next, along links (cap.go), so that what is drawn is connected as in
//     the store; the page says what was capped and how much was left out.
//   - Stable ids and classes name every chart and mark (svg#growth,
//     rect.g-new, path.slice, rect.bar, circle.node, line.edge, …) so that
//     a test or a script can count what was drawn.
package report
