/* argv_env - global pointers into main's argv and the environment (as getenv returns them).
 *
 * Usage: BSPG_TEST_VALUE=... argv_env shared|missing|stack ARG2 [more...]
 *   shared:  after bsp_init, main sets globals to argv[1], the NUL ending it, argv[2] + 3, the
 *            argv array, &argv[2], getenv("BSPG_TEST_VALUE"), a pointer into the middle of
 *            that value and the environ array; every process must see them pointing into ITS
 *            OWN argv and environment (not process 0's addresses), with the right contents;
 *            process 0 prints "PASS argv_env"
 *   missing: process 0 alone (after bsp_init, which the others do not leave) sets
 *            BSPG_ONLY_ROOT and keeps getenv's pointer to it in 'only_root': the others have
 *            no such variable, so bsp_begin stops the job with one line (p = 1 passes)
 *   stack:   'stack_text' points to main's local array: bsp_begin stops the job with the line
 *            for a pointer to process 0's stack memory (p = 1 passes) */
#include <stdlib.h>
#include <string.h>

#include "check.h"

extern char **environ;

/* This process's own argv, from the loader; thread-local, so not among the shared globals. */
static __thread char **own_argv;
static __thread int own_argc;

__attribute__((constructor)) static void capture(int argc, char **argv, char **envp) {
  (void)envp;
  own_argc = argc;
  own_argv = argv;
}

static const char *mode;
static const char *first;
static const char *first_end;
static const char *second_tail;
static char **args;
static char **second_slot;
static const char *value;
static const char *value_middle;
static char **env_array;
static const char *only_root;
static const char *stack_text;

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  const int s = bsp_pid();
  CHECK("argv_env", own_argv != NULL && own_argc >= 3, "own argv %p, argc %d", (void *)own_argv,
        own_argc);
  CHECK("argv_env", mode == own_argv[1], "mode %p, own argv[1] %p", (const void *)mode,
        (void *)own_argv[1]);
  if (strcmp(mode, "shared") == 0) {
    CHECK("argv_env", first == own_argv[1] && strcmp(first, "shared") == 0,
          "first %p (own argv[1] %p)", (const void *)first, (void *)own_argv[1]);
    CHECK("argv_env", first_end == own_argv[1] + strlen(own_argv[1]) && *first_end == '\0',
          "first_end %p", (const void *)first_end);
    CHECK("argv_env", second_tail == own_argv[2] + 3 && strcmp(second_tail, "a-gamma") == 0,
          "second_tail %p (own argv[2] %p)", (const void *)second_tail, (void *)own_argv[2]);
    CHECK("argv_env", args == own_argv && strcmp(args[2], "beta-gamma") == 0, "args %p (own %p)",
          (void *)args, (void *)own_argv);
    CHECK("argv_env", second_slot == &own_argv[2], "second_slot %p (own &argv[2] %p)",
          (void *)second_slot, (void *)&own_argv[2]);
    const char *own_value = getenv("BSPG_TEST_VALUE");
    CHECK("argv_env", own_value != NULL && value == own_value, "value %p (own %p)",
          (const void *)value, (const void *)own_value);
    CHECK("argv_env", strcmp(value, "left-middle-right") == 0, "value '%s'", value);
    CHECK("argv_env", value_middle == own_value + 5 && strcmp(value_middle, "middle-right") == 0,
          "value_middle %p (own value %p)", (const void *)value_middle, (const void *)own_value);
    CHECK("argv_env", env_array == environ, "env_array %p (own environ %p)", (void *)env_array,
          (void *)environ);
    printf("pid %d: %s %s %s %s\n", s, first, second_tail, value, value_middle);
  } else {
    printf("pid %d: %s %s\n", s, only_root ? only_root : "(none)", stack_text ? stack_text : "");
  }
  bsp_end();
}

int main(int argc, char **argv) {
  char local[] = "on the stack";
  if (argc < 3) {
    printf("FAIL: usage: argv_env shared|missing|stack ARG2 [more...]\n");
    return 2;
  }
  bsp_init(spmd, argc, argv);
  mode = argv[1];
  if (strcmp(mode, "shared") == 0) {
    first = argv[1];
    first_end = argv[1] + strlen(argv[1]);
    second_tail = argv[2] + 3;
    args = argv;
    second_slot = &argv[2];
    value = getenv("BSPG_TEST_VALUE");
    if (value == NULL) {
      printf("FAIL: argv_env: BSPG_TEST_VALUE is not set\n");
      return 2;
    }
    value_middle = value + 5;
    env_array = environ;
  } else if (strcmp(mode, "missing") == 0) {
    /* Only process 0 gets past bsp_init here, so the others lack the variable. */
    setenv("BSPG_ONLY_ROOT", "root's own", 1);
    only_root = getenv("BSPG_ONLY_ROOT");
  } else {
    stack_text = local;
  }
  spmd();
  printf("PASS argv_env\n");
  return 0;
}
