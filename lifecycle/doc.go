// Package lifecycle is the maintenance of a store: one pass of the
// lifecycle table (meta/policy.yaml, docs/policy.md) at a time, and the log of
// the passes (meta/maintenance.log).
//
// Model:
//   - A pass plans, then acts. It lists every memory as the operator sees
//     them (store.AllMemories: isolation does not apply, maintenance is
//     the operator's), decides its actions from the policy and the clock
//     (Options.Now; a later time previews the future), sorts them by path
//     and, unless Options.DryRun, carries them out one by one, yielding
//     between actions so that a mount's requests keep running.
//   - The actions: archive (idle working memories to
//     archive/scratchpads/<date>/, cold low-importance sessions, whole, to
//     archive/sessions/<YYYY-MM>/ by faded importance: sessions.go,
//     superseded skills to archive/deprecated_skills/), cold and duplicate
//     marks, purge of trash past its retention, summary (consolidate.go:
//     a session's summary.md) and profile (profiles.go: what a user said
//     about themselves). Moves are renames, so versions, links and index
//     entries follow the inode; nothing is deleted but trash. A pass is
//     idempotent: what it moved or marked no longer matches, and what it
//     wrote records what it covered.
//   - The packing policy: the archive directories a pass moved memories
//     into are packed (store.PackTree); the pack format and reading packed
//     content are the store's.
//   - What a pass writes (summaries, profiles) goes through the store like
//     any memory, indexed and versioned, and belongs to the users who may
//     see every source (store.WriteNew, store.RewriteInternal: no claim by
//     the store's user). The operator's programs (policy.Operator) run with
//     no shell, a timeout that kills their process group and capped output
//     (command.go); a program named in the stored policy never runs.
//   - Each pass is one entry of the store's journal (store.AppendJournal,
//     the last 400 kept), each line with the memory it is about and who
//     could see that memory then, so that Log shows every reader only the
//     lines about memories they may see.
//
// Everything here works over exported store primitives (store/maintenance.go:
// AllMemories, MoveUnique, MarkCold, MarkDuplicate, PurgeTrashed, WriteNew,
// RewriteInternal; PackTree, SampleSize, AppendJournal, Journal, Operator)
// and the store's ordinary API; it keeps no state between passes beyond
// what it writes into the store.
package lifecycle
