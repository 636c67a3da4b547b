package main

import (
	"strings"
	"testing"
)

// TestSummarySaysResgraphWasMeasuredBesideTheFloorAlone: a run that left
// the established runtime out (-no-cosi) and measured resgraph against the
// floor does not call resgraph "NOT measured".
func TestSummarySaysResgraphWasMeasuredBesideTheFloorAlone(t *testing.T) {
	avail := map[string]bool{bResgraph: true, bFloor: true}
	var vsCOSI, cosiFloor, rgFloor summaryAcc
	rgFloor.add(0.8, "W3 N=10000 create")

	line := summaryLine(avail, &vsCOSI, &cosiFloor, &rgFloor)
	if strings.Contains(line, "NOT measured") {
		t.Fatalf("summary of a measured resgraph says it was not: %s", line)
	}
	if !strings.Contains(line, "resgraph costs 1.25x the floor") {
		t.Fatalf("summary lacks resgraph's cost against the floor: %s", line)
	}

	var none summaryAcc
	if line := summaryLine(avail, &vsCOSI, &cosiFloor, &none); !strings.Contains(line, "NOT measured") {
		t.Fatalf("summary of a resgraph without figures does not say so: %s", line)
	}
}
