/* c_account.h -- the same deposit in C, instrumented through racelab/racelab.h. */
#ifndef EXAMPLE_C_ACCOUNT_H_
#define EXAMPLE_C_ACCOUNT_H_

#ifdef __cplusplus
extern "C" {
#endif

void c_account_deposit(long* balance, long amount);

#ifdef __cplusplus
}
#endif

#endif
