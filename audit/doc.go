// Package audit keeps the log of what MCP sessions changed in the store,
// and who: meta/mcp.log.
//
// Model:
//   - Every change an MCP tool call makes (create, str_replace, insert,
//     delete, rename) is recorded, after it is made, as one Entry: when,
//     the session's user (the name of its token, "" for a session for
//     every user), how it came (http or stdio), the command and the paths,
//     and the memory it was about with who could see that memory then.
//   - Entries are a journal of the store (store.AppendJournal): one key
//     each, the oldest dropped past the last 2000, so an entry never rewrites the
//     log. They live in the store, not with a process: a mount, an MCP
//     server holding the store and every host of a shared store read the
//     same log.
//   - Each reader is shown only the entries about memories it may see (a
//     store opened for a user; a mount's restricted reader), as
//     meta/maintenance.log is; entries about a directory are shown to the
//     session's user and to readers for every user.
//   - Agents cannot change the log: meta/ is generated, and the memory
//     tool refuses it.
package audit
