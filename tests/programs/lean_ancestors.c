/* tests/programs/lean_ancestors.c -- run under `racelab exec`, checks the
 * racelab processes above it (cli/torch_part.h: the lean racelab):
 *
 *   - none of them maps LibTorch (a libtorch* or libc10* in /proc/PID/maps);
 *   - there are at least two: the worker and the racelab command itself (its
 *     supervisor), each running the binary named racelab -- not racelab-torch;
 *   - with --names, the worker carries its role: argv[0] and the process name
 *     are "racelab: worker".
 *
 * It walks up from its parent while the process runs racelab or this program
 * (the fork server, when trials are forked from it), and prints what it saw.
 * Exit 0 when all holds, 1 otherwise (a failed trial: racelab exec exits 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_file(const char* path, char* buf, size_t size) {
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, size - 1, f);
  fclose(f);
  buf[n] = '\0';
  return (int)n;
}

static int parent_of(int pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  if (read_file(path, buf, sizeof buf) <= 0) return -1;
  const char* close_paren = strrchr(buf, ')'); /* the name may hold spaces and parens */
  int ppid = -1;
  char state;
  if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) return -1;
  return ppid;
}

static void exe_of(int pid, char* out, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/exe", pid);
  ssize_t n = readlink(path, out, size - 1);
  out[n > 0 ? n : 0] = '\0';
}

static const char* base(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* The LibTorch libraries mapped by pid, counted; their names printed. */
static int torch_libraries(int pid) {
  char path[64], line[4096];
  snprintf(path, sizeof path, "/proc/%d/maps", pid);
  FILE* f = fopen(path, "r");
  if (!f) {
    printf("lean_ancestors: cannot read %s\n", path);
    return 1;
  }
  int found = 0;
  char last[4096] = "";
  while (fgets(line, sizeof line, f)) {
    const char* file = strchr(line, '/');
    if (!file) continue;
    const char* name = base(file);
    if ((strncmp(name, "libtorch", 8) == 0 || strncmp(name, "libc10", 6) == 0) && strcmp(file, last) != 0) {
      printf("  maps LibTorch: %s", file);
      snprintf(last, sizeof last, "%s", file);
      ++found;
    }
  }
  fclose(f);
  return found;
}

int main(int argc, char** argv) {
  const int check_names = argc > 1 && strcmp(argv[1], "--names") == 0;
  char self[4096];
  exe_of(getpid(), self, sizeof self);
  int racelabs = 0, bad = 0, named_worker = 0;
  for (int pid = getppid(); pid > 1; pid = parent_of(pid)) {
    char exe[4096], comm[64] = "", cmdline[4096] = "";
    char path[64];
    exe_of(pid, exe, sizeof exe);
    const int is_self = strcmp(exe, self) == 0;
    const int is_racelab = strcmp(base(exe), "racelab") == 0;
    if (!is_self && !is_racelab) {
      printf("lean_ancestors: %d runs %s: not racelab, stop\n", pid, exe);
      break;
    }
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    read_file(path, comm, sizeof comm);
    comm[strcspn(comm, "\n")] = '\0';
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    read_file(path, cmdline, sizeof cmdline); /* argv[0] up to its NUL */
    printf("lean_ancestors: %d runs %s, name \"%s\", argv[0] \"%s\"\n", pid, exe, comm, cmdline);
    if (is_self) continue; /* the fork server: this program, with racelab's preload library */
    ++racelabs;
    bad += torch_libraries(pid);
    if (strcmp(comm, "racelab: worker") == 0 && strcmp(cmdline, "racelab: worker") == 0) ++named_worker;
  }
  if (bad > 0) printf("lean_ancestors: FAIL: %d LibTorch libraries mapped by racelab processes\n", bad);
  if (racelabs < 2)
    printf("lean_ancestors: FAIL: %d racelab process(es) above this one, expected the worker and racelab\n", racelabs);
  if (check_names && named_worker != 1)
    printf("lean_ancestors: FAIL: %d processes named \"racelab: worker\" (argv[0] and name), expected 1\n",
           named_worker);
  return bad == 0 && racelabs >= 2 && (!check_names || named_worker == 1) ? 0 : 1;
}
