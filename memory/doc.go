// Package memory turns a memory file's bytes into metadata: YAML front
// matter for Markdown and text, top-level or "metadata" keys for JSON.
//
// Parsing never fails a write: Parse returns whatever metadata it could read
// plus an error describing what was wrong, and the caller stores the bytes as
// written either way. The package is pure (no I/O) so it can be fuzzed.
package memory
