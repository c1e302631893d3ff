// Three tellers move money between accounts, each transfer under the bank's
// lock, and audit their own ledger between transfers: a stretch of work with
// no lock, no sleep and no other call that racelab sees. Race-free: the total
// is always the same. Under racelab a teller that computes is running, not
// waiting, however long a loaded machine makes it take.
#include <pthread.h>
#include <stdio.h>

#define TELLERS 3
#define TRANSFERS 4
#define ACCOUNTS 8

static pthread_mutex_t bank_lock = PTHREAD_MUTEX_INITIALIZER;
static long balance[ACCOUNTS];

// A few hundred microseconds of the teller's own arithmetic.
static unsigned long audit(unsigned long seed) {
  unsigned long h = seed;
  for (int i = 0; i < 200000; ++i) h = h * 6364136223846793005UL + 1442695040888963407UL;
  return h;
}

static void* teller(void* arg) {
  unsigned long id = (unsigned long)arg, check = 0;
  for (int i = 0; i < TRANSFERS; ++i) {
    int from = (int)((id + i) % ACCOUNTS), to = (int)((id * 3 + i + 1) % ACCOUNTS);
    pthread_mutex_lock(&bank_lock);
    balance[from] -= 10;
    balance[to] += 10;
    pthread_mutex_unlock(&bank_lock);
    check ^= audit(id * 131 + (unsigned long)i);
  }
  return (void*)check;
}

int main(void) {
  pthread_t t[TELLERS];
  for (int i = 0; i < ACCOUNTS; ++i) balance[i] = 100;
  for (long i = 0; i < TELLERS; ++i) pthread_create(&t[i], NULL, teller, (void*)i);
  for (int i = 0; i < TELLERS; ++i) pthread_join(t[i], NULL);
  long total = 0;
  for (int i = 0; i < ACCOUNTS; ++i) total += balance[i];
  if (total != 100 * ACCOUNTS) {
    printf("money appeared or vanished: total %ld\n", total);
    return 1;
  }
  printf("total %ld\n", total);
  return 0;
}
