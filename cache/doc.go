// Package cache holds the bounded in-memory caches of mnemofs, built on
// hashicorp/golang-lru/v2. Every cache here is safe for concurrent use and
// bounded, so memory stays flat however large the store grows.
package cache
