package runner

import (
	"time"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
)

// Metric names (keys of Result.Metrics). The driver reads them by these names.
const (
	// every run
	MVmHWM = "vmhwm_mib" // the child's own VmHWM; the driver adds rusage's peak RSS as "peak_rss_mib"

	// W1
	MOpsPerS     = "ops_per_s"     // 2N / writer time
	MAllocsPerOp = "allocs_per_op" // heap allocations / 2N, whole process incl. watchers
	MBytesPerOp  = "bytes_per_op"  // heap bytes allocated / 2N
	MWriteMs     = "write_ms"
	MDrainMs     = "drain_ms"    // until every watcher saw every resource's final state
	MEventsFrac  = "events_frac" // events delivered / (watchers * 2N); < 1 means coalesced or cut
	MCut         = "cut"         // watchers whose watch ended with an Errored event (overrun)
	MComplete    = "complete"    // watchers that saw the final state of every resource
	MTimedOut    = "timed_out"   // 1 when the watchers did not finish in time

	// W2
	MUpdPerS       = "upd_per_s"
	MP50Us         = "p50_us"
	MP99Us         = "p99_us"
	MMaxUs         = "max_us"
	MCallP99Us     = "call_p99_us"
	MDeliveredFrac = "delivered_frac"
	MNegatives     = "negatives" // W2: count; E1: fraction of the samples

	// E1 (with the W1 metrics above)
	MValueBytes = "value_bytes" // bytes of one stored value (the encoded resource), mean over the run's writes

	// W3 / W4
	MCreateResPerS = "create_res_per_s"
	MUpdateResPerS = "update_res_per_s"
	MCreateMs      = "create_ms"
	MUpdateMs      = "update_ms"
	MCreateIssueMs = "create_issued_ms"
	MUpdateIssueMs = "update_issued_ms"
	MRewatches     = "rewatches"

	// W5
	MListMs     = "list_ms" // median of the Lists
	MListMinMs  = "list_min_ms"
	MListAllocs = "list_allocs" // per List
	MListMiB    = "list_mib"    // allocated per List
	MGetNs      = "get_ns"
	MGetAllocs  = "get_allocs"
	MGetBytes   = "get_bytes"
	MPopulateMs = "populate_ms"

	// W6
	MHeapPerRes      = "heap_b_per_res"
	MHeapInusePerRes = "heapinuse_b_per_res"
	MObjectsPerRes   = "objects_per_res"
	MRSSPerRes       = "rss_b_per_res"
)

// W1Outcome is what a W1 run measured.
type W1Outcome struct {
	Write, Drain  time.Duration
	Before, After measure.Mem
	Trackers      []*measure.FinalTracker
	Cut           int
	TimedOut      bool
}

// ReportW1 turns a W1 outcome into metrics.
func ReportW1(r *Report, p params.W1Params, o W1Outcome) {
	ops := float64(2 * p.N)

	r.Set(MOpsPerS, ops/o.Write.Seconds())
	r.Set(MWriteMs, measure.Millis(o.Write))
	r.Set(MAllocsPerOp, float64(o.After.Mallocs-o.Before.Mallocs)/ops)
	r.Set(MBytesPerOp, float64(o.After.TotalAlloc-o.Before.TotalAlloc)/ops)

	if p.Watchers == 0 {
		return
	}

	events, complete := 0, 0

	for _, t := range o.Trackers {
		events += t.Events

		if t.Done() {
			complete++
		}
	}

	r.Set(MDrainMs, measure.Millis(o.Drain))
	r.Set(MEventsFrac, float64(events)/(ops*float64(p.Watchers)))
	r.Set(MCut, float64(o.Cut))
	r.Set(MComplete, float64(complete))
	r.Set(MTimedOut, b2f(o.TimedOut))
}

// ReportE1 turns an E1 outcome into metrics: W1's, plus the delay from each
// write's return to its receipt by each watcher (p50/p99/max), as in W2.
func ReportE1(r *Report, p params.W1Params, o W1Outcome, d measure.OpDelayStats, valueBytes float64) {
	ReportW1(r, p, o)

	if valueBytes > 0 {
		r.Set(MValueBytes, valueBytes)
	}

	if p.Watchers == 0 {
		return
	}

	r.Set(MP50Us, measure.Micros(d.P50))
	r.Set(MP99Us, measure.Micros(d.P99))
	r.Set(MMaxUs, measure.Micros(d.Max))
	r.Set(MCallP99Us, measure.Micros(d.CallP99))
	r.Set(MNegatives, float64(d.Negatives)/float64(max(1, d.Samples)))
}

// ReportW2 turns a W2 outcome into metrics.
func ReportW2(r *Report, p params.W2Params, write, drain time.Duration, timedOut bool, st measure.FanOutStats) {
	r.Set(MUpdPerS, float64(p.Updates)/write.Seconds())
	r.Set(MWriteMs, measure.Millis(write))
	r.Set(MDrainMs, measure.Millis(drain))
	r.Set(MP50Us, measure.Micros(st.P50))
	r.Set(MP99Us, measure.Micros(st.P99))
	r.Set(MMaxUs, measure.Micros(st.Max))
	r.Set(MCallP99Us, measure.Micros(st.CallP99))
	r.Set(MDeliveredFrac, float64(st.Samples)/float64(max(1, st.Expected)))
	r.Set(MCut, float64(st.Cut))
	r.Set(MComplete, float64(st.Complete))
	r.Set(MNegatives, float64(st.Negatives))
	r.Set(MTimedOut, b2f(timedOut))
}

// ChainOutcome is what a W3/W4 run measured.
type ChainOutcome struct {
	CreateIssued, CreateDone time.Duration
	UpdateIssued, UpdateDone time.Duration
	Rewatches                int
}

// ReportChain turns a W3/W4 outcome into metrics (a phase that did not
// finish is left out).
func ReportChain(r *Report, p params.ChainParams, o ChainOutcome) {
	n := float64(p.N)

	if o.CreateDone > 0 {
		r.Set(MCreateResPerS, n/o.CreateDone.Seconds())
		r.Set(MCreateMs, measure.Millis(o.CreateDone))
		r.Set(MCreateIssueMs, measure.Millis(o.CreateIssued))
	}

	if o.UpdateDone > 0 {
		r.Set(MUpdateResPerS, n/o.UpdateDone.Seconds())
		r.Set(MUpdateMs, measure.Millis(o.UpdateDone))
		r.Set(MUpdateIssueMs, measure.Millis(o.UpdateIssued))
	}

	r.Set(MRewatches, float64(o.Rewatches))
}

// W5Outcome is what a W5 run measured.
type W5Outcome struct {
	Populate            time.Duration
	Lists               []time.Duration
	ListBefore, ListAft measure.Mem
	Gets                time.Duration
	GetBefore, GetAfter measure.Mem
}

// ReportW5 turns a W5 outcome into metrics.
func ReportW5(r *Report, p params.W5Params, o W5Outcome) {
	lists := float64(max(1, len(o.Lists)))
	gets := float64(max(1, p.Gets))

	r.Set(MPopulateMs, measure.Millis(o.Populate))

	if len(o.Lists) > 0 {
		ds := append([]time.Duration(nil), o.Lists...)
		r.Set(MListMs, measure.Millis(measure.Median(ds)))
		r.Set(MListMinMs, measure.Millis(ds[0]))
	}

	r.Set(MListAllocs, float64(o.ListAft.Mallocs-o.ListBefore.Mallocs)/lists)
	r.Set(MListMiB, float64(o.ListAft.TotalAlloc-o.ListBefore.TotalAlloc)/lists/(1<<20))
	r.Set(MGetNs, float64(o.Gets.Nanoseconds())/gets)
	r.Set(MGetAllocs, float64(o.GetAfter.Mallocs-o.GetBefore.Mallocs)/gets)
	r.Set(MGetBytes, float64(o.GetAfter.TotalAlloc-o.GetBefore.TotalAlloc)/gets)
}

// ReportW6 turns a W6 outcome into metrics; before and after are GC'ed snapshots.
func ReportW6(r *Report, p params.W6Params, populate time.Duration, before, after measure.Mem) {
	n := float64(p.N)

	r.Set(MPopulateMs, measure.Millis(populate))
	r.Set(MHeapPerRes, (float64(after.HeapAlloc)-float64(before.HeapAlloc))/n)
	r.Set(MHeapInusePerRes, (float64(after.HeapInuse)-float64(before.HeapInuse))/n)
	r.Set(MObjectsPerRes, (float64(after.LiveObjects())-float64(before.LiveObjects()))/n)
	r.Set(MRSSPerRes, (float64(after.RSS)-float64(before.RSS))/n)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}

	return 0
}
