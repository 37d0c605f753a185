// Package redact finds secrets and personal data in text and masks them:
// the redact: rules of meta/policy.yaml (policy.Policy.Redact). A rule is
// a built-in detector (email, phone, api_key, card, iban) or a named
// custom regular expression, with a mode and optional path globs:
//
//   - index: the stored bytes stay as written; everything generated from
//     them (the search index, snippets, .results, context/, log line
//     results, embedding inputs, MCP search and context) shows the marker
//     instead. The views apply Redactor.Redact where text leaves a memory.
//   - store: the bytes are masked when a file is committed, before any of
//     them reach the KV or a blob file; the store applies
//     Redactor.ForStore.
//
// A match is replaced by "[redacted:<rule>]". Detectors check what a
// pattern finds (the Luhn sum of a card number, the mod-97 check of an
// IBAN, the digit count of a phone number), so that version numbers,
// dates, hashes and ordinary numbers are left alone. Redacting is stable:
// a match that overlaps a marker already in the text is not replaced, so
// Redact(Redact(x)) == Redact(x) and the markers themselves are never
// masked again. Patterns are Go's RE2 (linear time); the rules are capped
// in number (MaxRules) and pattern length (MaxPattern). Pure: no I/O, and
// nothing here ever logs or returns the text it masked.
package redact
