package cache

// DefaultBytes is the default memory bound of the mount's hot caches
// (mnemofs mount --cache-size).
const DefaultBytes = 64 << 20

// Nodes is how many nodes the kernel may keep looked up under a bound of
// total bytes (fusefs.Config.MaxNodes): one for each KiB, at least 16,384
// (a node costs the daemon about half a KiB, and the store's cached
// record of it as much again).
func Nodes(total int64) int {
	return int(max(total>>10, 1<<14))
}

// Split divides the --cache-size bound between the content cache of the
// store and the query-result cache of the views: results are small, so
// queries get an eighth and content the rest. A bound <= 0 turns both off
// (both parts are then 0).
func Split(total int64) (content, queries int64) {
	if total <= 0 {
		return 0, 0
	}
	queries = total / 8
	return total - queries, queries
}
