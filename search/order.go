package search

// Documents' orders: a log's lines by number, files by name with their
// numbers compared as numbers.

// lineOrder is the order of a log's line n.
func lineOrder(n uint32) string {
	const digits = "0123456789"
	b := make([]byte, 10)
	for i := 9; i >= 0; i-- {
		b[i] = digits[n%10]
		n /= 10
	}
	return string(b)
}

// naturalLess orders names with embedded numbers numerically
// ("D1_2" < "D1_10").
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		ca, cb := a[0], b[0]
		if isDigit(ca) && isDigit(cb) {
			na, ra := leadingNumber(a)
			nb, rb := leadingNumber(b)
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = ra, rb
			continue
		}
		if ca != cb {
			return ca < cb
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// leadingNumber splits off the digits at the start of s, without leading
// zeros.
func leadingNumber(s string) (string, string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	n := s[:i]
	for len(n) > 1 && n[0] == '0' {
		n = n[1:]
	}
	return n, s[i:]
}
