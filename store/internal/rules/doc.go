// Package rules is a store's policy as read from where the store keeps it
// (a setting), and what is compiled from it: the ignore rules (which
// files are not memories), the redaction rules, and the counts of what
// store-mode rules masked since the store opened.
//
// Invariants:
//   - The parsed policy and what is compiled from it are cached until
//     Drop (the stored policy changed, here or on another host); a
//     policy that could not be read is stood in for by the last one read
//     (else the defaults), and nothing compiled from a stand-in is
//     cached, so the stored rules apply as soon as they can be read.
//   - A stored policy's consolidation section (older versions obeyed
//     it) is never obeyed, and logged once until WarnAgain.
//
// Who may change the policy, and the event that follows a change, are
// the store's.
package rules
