package redact

import "bytes"

// A marker stands where a secret was, and a secret ends (and starts) with
// a letter or digit in every built-in detector: next to a marker, a check
// sees such a character, as it did before the secret was masked. Without
// this, masking one of two secrets glued together ("+4915112345678+49...")
// would turn the other into a match of its own, and redacting the output
// again would change it.
var markerChar = []byte("0")

// markerOpen starts every marker; markerMax is the longest one.
const (
	markerOpen = "[redacted:"
	markerMax  = len(markerOpen) + 32 + 1
)

// beforeMarker is pre, or a stand-in when pre ends with a marker.
func beforeMarker(pre []byte) []byte {
	if len(pre) == 0 || pre[len(pre)-1] != ']' {
		return pre
	}
	tail := pre[max(0, len(pre)-markerMax):]
	if i := bytes.LastIndex(tail, []byte(markerOpen)); i >= 0 {
		if m := markerRE.FindIndex(tail[i:]); m != nil && m[0] == 0 && m[1] == len(tail)-i {
			return markerChar
		}
	}
	return pre
}

// afterMarker is post, or a stand-in when post starts with a marker.
func afterMarker(post []byte) []byte {
	if bytes.HasPrefix(post, []byte(markerOpen)) {
		if m := markerRE.FindIndex(post[:min(len(post), markerMax)]); m != nil && m[0] == 0 {
			return markerChar
		}
	}
	return post
}
