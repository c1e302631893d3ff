/* racelab/host.h -- the plain C ABI of the engine, for a foreign host: a
 * process that is not racelab's own binary (a Python worker, through ctypes)
 * and still is a racelab worker like any other.
 *
 * The shared library libracelab_host.so exports exactly these functions. It
 * has no LibTorch dependency and hides every C++ symbol, so it loads beside
 * any torch, in any process whose glibc is at least the build machine's.
 *
 * One host process runs one trial at a time:
 *
 *   racelab_host_worker_open()           once: fds 3-5 from the supervisor
 *   loop:
 *     read a trial spec (one JSON line) from fd 3
 *     racelab_host_trial_begin(spec)     strategy, scheduler, watchdog attached
 *     racelab_host_enter_main()          the calling thread is managed thread 0
 *       ... the body starts threads (thread_create in the parent, then
 *       thread_start / thread_end in the child), joins them (join), passes
 *       points, blocks and releases ...
 *     racelab_host_exit_main()
 *     result = racelab_host_trial_end(observation)   classified, JSON
 *     write result + "\n" to fd 4
 *
 * Every call that can wait (point, thread_start, join, block) blocks in the
 * scheduler until the strategy picks the calling thread; a ctypes CDLL call
 * releases Python's GIL meanwhile. Such a call returns RACELAB_HOST_ABORTED
 * when the engine abandoned the trial (deadlock, watchdog, divergence): the
 * host must unwind that thread (Python: raise) and let it end. A thread the
 * controller does not manage gets RACELAB_HOST_OK at once: points and
 * primitives are then no-ops, as in racelab/sync.h.
 *
 * A managed thread that runs on with no call into racelab for longer than the
 * trial's knob let_go_cpu_ms of its own CPU time (never wall time: a loaded
 * machine changes nothing) is let go: it runs freely and rejoins at its next
 * call, and the schedule records the let_go step (engine/scheduler.h).
 *
 * Names (points, resources) may be temporary: the library interns them.
 * Errors from trial_begin / trial_end: racelab_host_last_error().
 */
#ifndef RACELAB_HOST_H_
#define RACELAB_HOST_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RACELAB_HOST_ABI_VERSION 3
#define RACELAB_HOST_OK 0
#define RACELAB_HOST_ABORTED 1
#define RACELAB_HOST_ERROR (-1)
/* racelab_host_yield, _sleep, _block_for and _join_for: the caller is not
 * under a scheduler (no trial, an unmanaged thread, or a free-running trial):
 * it waits for real. */
#define RACELAB_HOST_FREE 2
/* racelab_host_block_for and _join_for: the wait's timeout expired. */
#define RACELAB_HOST_TIMEDOUT 3

/* RACELAB_HOST_ABI_VERSION of the library: a host checks it before anything. */
int racelab_host_abi_version(void);
/* The message of the last RACELAB_HOST_ERROR on the calling thread. */
const char* racelab_host_last_error(void);

/* Maps the supervisor's channels (trial specs on fd 3, results on fd 4, the
 * shared decision trace on fd 5), asks to die with the parent and installs the
 * last-words signal handlers. OK, or ERROR when not started by a supervisor
 * (trials then run unmirrored, e.g. a host's own tests). */
int racelab_host_worker_open(void);

/* Starts a trial from a trial spec (engine/trial.h, JSON): the strategy and its
 * scheduler (or nothing for `os`, jitter for `os+jitter`), attached, decisions
 * mirrored into the trace when the channel is open, and a watchdog thread that
 * aborts the trial as `hang` after spec.watchdog_s without progress. */
int racelab_host_trial_begin(const char* spec_json);
/* The calling thread becomes managed thread 0 (the trial body). */
int racelab_host_enter_main(void);
/* Thread 0's body returned: it ends like any managed thread. */
int racelab_host_exit_main(void);
/* Ends the trial: waits a moment for stragglers, detaches, classifies.
 * observation_json: {"errors": [..], "stuck_state": "", "wrong_result": "",
 * "silent_fallbacks": 0, "metrics": {}} (racelab/workload.h's Observation).
 * Returns the TrialResult as JSON, to be freed with racelab_host_free; NULL
 * on error. */
char* racelab_host_trial_end(const char* observation_json);
void racelab_host_free(char* p);

/* 1 when the calling thread is a managed thread of the running trial. */
int racelab_host_managed(void);
/* An interleaving point (racelab/point.h). */
int racelab_host_point(const char* name);
/* Managed threads (racelab/controller.h): the parent asks for an id (-1: the
 * parent is not managed, so the child is not either); the child starts and
 * ends with it; a parent joins through the scheduler before the OS join. */
int racelab_host_thread_create(void);
int racelab_host_thread_start(int id);
void racelab_host_thread_end(int id);
int racelab_host_join(int id);
/* A step at which the caller steps aside (a sleep, a timed wait, a poll of a
 * flag): under a scheduler another runnable thread runs first when there is
 * one, and the choice is no preemption. OK after that step; FREE when the
 * caller is not scheduled (see RACELAB_HOST_FREE). */
int racelab_host_yield(const char* name);
/* The trial body is done and the threads left are ones it does not wait for
 * (Python's daemon threads): they are unwound (their next call into racelab
 * answers ABORTED) and the trial is classified by its observation, as if they
 * had ended. */
int racelab_host_end_leftover(const char* why);
/* A primitive that cannot proceed (resource: any stable address-like key)
 * blocks in the scheduler; release makes its waiters runnable; acquire is
 * informational (timelines). */
int racelab_host_block(uintptr_t resource, const char* what);
void racelab_host_release(uintptr_t resource);
void racelab_host_acquire(uintptr_t resource, const char* what);

/* Time under a scheduler is logical (engine/scheduler.h): it passes with
 * the steps, and jumps when nothing but waiting threads are left. Waits with
 * a timeout keep their contract on it: they return as soon as what they wait
 * for happens, and time out only when their deadline passes in logical time
 * -- through the others' steps, or because nothing else could run and theirs
 * was the first deadline. A timeout that fired is kept with the trial, and a
 * failure that needed one says so in its detail.
 *
 * now_ns: the trial's logical time in ns, or -1 when the caller is not
 * scheduled (use the real clock).
 * sleep: the caller sleeps ns of logical time while the others run. OK, or
 * FREE (sleep for real).
 * block_for: as block, with a timeout of timeout_ns: OK when released,
 * TIMEDOUT when the timeout expired, ABORTED, or FREE (wait for real).
 * join_for: as join, with a timeout: OK when the thread ended, TIMEDOUT, ABORTED
 * or FREE. `what` names the wait in the trace and in the failure's detail
 * ("join(timeout=60) of worker-1 in MainThread"). */
int64_t racelab_host_now_ns(void);
int racelab_host_sleep(const char* name, int64_t ns);
int racelab_host_block_for(uintptr_t resource, const char* what, int64_t timeout_ns);
int racelab_host_join_for(int id, const char* what, int64_t timeout_ns);

/* step_out: the caller is about to wait for something no managed thread
 * does (another process, a thread racelab does not manage): it is let go, so
 * the others run meanwhile and logical time does not jump past a wait that
 * takes real time. It then waits for real, with its real timeout, as
 * natively, and rejoins at its next call. The step is recorded as a let-go,
 * so a replay says that determinism was lost there. OK, or FREE when the
 * caller is not scheduled. */
int racelab_host_step_out(const char* why);

/* In a child made by fork() during a trial: forget the controller, so the
 * child runs freely (its threads are not the scheduler's). */
void racelab_host_forget_after_fork(void);

#ifdef __cplusplus
}
#endif

#endif /* RACELAB_HOST_H_ */
