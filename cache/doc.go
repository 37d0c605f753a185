// Package cache holds the bounded in-memory caches of mnemofs, built on
// hashicorp/golang-lru/v2, and Memo, a fixed table that memoises a pure
// function of short strings (the tokenizer's terms) without a lock.
// Every cache here is safe for concurrent use and bounded, so memory
// stays flat however large the store grows.
package cache
