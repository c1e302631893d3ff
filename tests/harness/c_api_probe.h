/* Functions of c_api_probe.c, a C translation unit that calls racelab/racelab.h. */
#ifndef RACELAB_TESTS_HARNESS_C_API_PROBE_H_
#define RACELAB_TESTS_HARNESS_C_API_PROBE_H_

#ifdef __cplusplus
extern "C" {
#endif

void c_probe_reset(void);
long c_probe_balance(void);
void c_probe_deposit(long amount);
void c_probe_temporary_name(void);
void c_probe_null_name(void);
/* Four racelab_point_access calls on g_balance; returns its address. */
const void* c_probe_accesses(void);
int c_probe_is_controlled(void);
int c_probe_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif
