// Package memory turns a memory file's bytes into metadata: YAML front
// matter for Markdown and text, top-level or "metadata" keys for JSON, and
// for a log (.jsonl, .log), which has no file-level metadata, each line's
// own (ParseLine: user/users, speaker/name/role, created/timestamp/time/
// date, tags, the body from text/content/message, other keys kept).
//
// Parsing never fails a write: Parse returns whatever metadata it could read
// plus an error describing what was wrong, and the caller stores the bytes as
// written either way. The package is pure (no I/O) so it can be fuzzed.
//
// Limits (limits.go), so that one file cannot make the views or the store
// slow for everyone; each one reached is reported in Parsed.Err (the xattr
// user.mnemofs.error, meta/errors), never by refusing the write:
//   - A list key (tags, users, entities, related, and any list under an
//     unknown key) keeps its first MaxValues (256) distinct values, e.g.
//     "tags: 380000 values, only the first 256 are kept".
//   - A tag, user, entity or related value over MaxValueLen (255) bytes is
//     dropped: it could not be a name under by-tag/ or by-user/.
//   - A file over MaxParse (4 MiB) declares no metadata. One that starts
//     with front matter or a JSON object gets a problem saying so
//     (Unparsed: "front matter over 4194304 bytes not parsed"): from Parse
//     when given all of it (imports), else from views, which reads the
//     first MaxParse bytes of such a file and reports it in meta/errors
//     (the store does not read files that large back for parsing).
//   - Parsing takes time linear in the front matter's size (yaml.go:
//     yaml.Unmarshal compares every key of a mapping with every other one;
//     what aliases expand to is bounded by the input's size).
package memory
