// Package columns is the array format of the snapshot's segments
// (search/segment.go, views/catbase.go): arrays of little-endian values,
// each written as its byte length (uint64), its bytes and zeros up to a
// multiple of 8, so that an array in a mapped file starts aligned and its
// values can be used where they lie. Varints reads the records of
// uvarints and length-prefixed bytes that the catalog's segment and the
// store's inode records are made of.
package columns
