/* racelab/racelab.h -- the interleaving point for C and for other languages' FFIs.
 *
 *   racelab_point("queue.push");
 *   racelab_point_access("account.balance", &account->balance, RACELAB_ACCESS_WRITE);
 *
 * The same point as racelab::point() (racelab/point.h), behind a plain C ABI:
 * C programs, and anything that can call a C function (Python's ctypes, Rust,
 * Go's cgo), mark places where a thread switch changes the outcome. Link the
 * library racelab::point (libracelab_point.a, position-independent).
 *
 * With no controller attached a call costs one relaxed atomic load and a
 * not-taken branch, plus the call itself. Unlike racelab::point(), the name
 * need not outlive the call: a controlled point copies it once into a table
 * that lives as long as the process, so a temporary string from an FFI is fine.
 * The object and access say what the step touches, as racelab::point(name,
 * object, access) does: a search that reduces by them treats a point without
 * an object, or with RACELAB_ACCESS_NONE, as touching everything.
 *
 * Plain C99; every symbol is prefixed racelab_ / RACELAB_.
 */
#ifndef RACELAB_RACELAB_H_
#define RACELAB_RACELAB_H_

#ifdef __cplusplus
extern "C" {
#endif

/* What the step after a point does to its object. An int, not an enum type,
 * so every FFI passes it the same way. */
#define RACELAB_ACCESS_NONE 0  /* unknown, or no object */
#define RACELAB_ACCESS_READ 1
#define RACELAB_ACCESS_WRITE 2

/* The version of this ABI; a binding checks it before it calls anything else. */
#define RACELAB_C_ABI_VERSION 1
int racelab_c_abi_version(void);

/* An interleaving point named `name` (NULL is named "racelab_point"). */
void racelab_point(const char* name);

/* An interleaving point before a step that reads or writes `object`.
 * `access` is one of RACELAB_ACCESS_*. */
void racelab_point_access(const char* name, const void* object, int access);

/* 1 when a controller schedules the calling thread (its points may switch
 * threads), else 0. For diagnostics; a program never needs to ask. */
int racelab_is_controlled(void);

#ifdef __cplusplus
}
#endif

#endif /* RACELAB_RACELAB_H_ */
