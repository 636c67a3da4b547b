// Package queue is the work queue behind a QController's workers: a set of
// comparable keys (resource pointers) handed out one at a time to a pool of
// workers, with per-key retry backoff and delayed requeues.
//
// The queue has these properties:
//
//   - Deduplicating (rule Q1). A key added again while it waits is stored
//     once and keeps its place. A key added while it is being processed is
//     processed exactly once more, after the current run reports [Queue.Done].
//   - Exclusive (rule Q2). A key handed out by [Queue.Get] is in flight until
//     [Queue.Done]; it is never handed out again before that, so no key is
//     processed twice at once. Different keys are processed in parallel by as
//     many workers as call Get.
//   - Exclusive with a partner ([NewWithPartner]). A key may have one
//     partner key that must never be in flight at the same time (a
//     QController's Reconcile and MapInput items of one pointer): a due key
//     whose partner is in flight waits until the partner is done.
//   - Fair. Keys that are due are served in the order they became due (FIFO):
//     a key that is re-added, fails or is requeued goes to the back of the
//     line, so a key that keeps changing or failing cannot starve the others.
//     Every key that is due is served before any key still waiting out a
//     backoff or a requeue delay.
//   - Backoff per key (rule Q3). A [Failure] requeues the key after the
//     policy's backoff (retry.Backoff: its initial delay, then 2x, 4x …
//     per consecutive failure, capped at its maximum); [Success] resets
//     the key's failure count. [RequeueAfter]
//     requeues the key after an exact interval without counting a failure
//     (and without resetting the count). A new [Queue.Add] of a key waiting
//     out a backoff or a delay makes it due at once; its failure count is
//     kept, so a key that keeps failing backs off further even while it keeps
//     changing, until it succeeds.
//   - Retry policy (retry.Policy, counted per key by retry.Item).
//     MaxAttempts parks a key after that many consecutive failed runs: it
//     is no longer retried, is reported by [Queue.Parked] with its last
//     failure and still counts as failing, until its next Add makes it a
//     fresh key (due now, counts at zero). ChangeAbandonsRetry makes every
//     Add abandon the key's retry: its failure and attempt counts start
//     over. Both are off by default.
//   - Bounded memory. The queue holds state only for keys that are waiting or
//     in flight, one entry per distinct key however often it is added; its
//     memory is proportional to the number of distinct keys (at most the
//     number of resources), never to the number of adds. Storage that grew
//     for a large burst (the initial fill of every resource) is released when
//     no key is waiting or in flight any more; the next burst's storage
//     grows to that burst's size at once.
//   - Many producers and consumers; no goroutines. Every method is safe for
//     concurrent use. The queue starts no goroutine: a blocked [Queue.Get]
//     waits on its own context, on a wake-up from the producer that made a
//     key available, and (for one waiter at a time) on a timer for the
//     earliest delayed key.
//   - Shutdown. [Queue.ShutDown] wakes every blocked Get, which returns
//     ok=false; later Gets return ok=false at once, later Adds are ignored,
//     and Done only releases the key.
//
// Time is read with [time.Now] and waited for with [time.NewTimer], so the
// queue runs in virtual time inside a testing/synctest bubble.
package queue
