/* A stand-in for a racelab host that exports the C ABI of racelab/racelab.h
 * (as racelab exec's preload library does): every thread counts as controlled,
 * and each point's name is appended, one per line, to the file named by
 * $C_ABI_HOST_OUT. Preloaded with libracelab_op_points_preload.so, it shows
 * which ops became points. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "racelab/racelab.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

int racelab_c_abi_version(void) { return RACELAB_C_ABI_VERSION; }

int racelab_is_controlled(void) { return 1; }

void racelab_point(const char* name) {
  const char* path = getenv("C_ABI_HOST_OUT");
  FILE* out;
  if (path == NULL) return;
  pthread_mutex_lock(&g_mu);
  out = fopen(path, "a");
  if (out != NULL) {
    fprintf(out, "%s\n", name);
    fclose(out);
  }
  pthread_mutex_unlock(&g_mu);
}

void racelab_point_access(const char* name, const void* object, int access) {
  (void)object;
  (void)access;
  racelab_point(name);
}
