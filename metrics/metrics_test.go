package metrics

import (
	"testing"
	"time"
)

func TestSummary(t *testing.T) {
	var h Histogram
	for i := 0; i < 90; i++ {
		h.Observe(10 * time.Microsecond)
	}
	for i := 0; i < 10; i++ {
		h.Observe(5 * time.Millisecond)
	}
	s := h.Summary()
	if s.Count != 100 || s.P50US != 16 || s.P95US != 8192 {
		t.Fatalf("%+v", s)
	}
}
