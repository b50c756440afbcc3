/* Shared by the profiler's C tests: counting a profile's events, checking each one's times. */
#ifndef CAIRN_TESTS_CAPI_PROFILE_CHECK_H_
#define CAIRN_TESTS_CAPI_PROFILE_CHECK_H_

#include "check.h"

/* The traced function of the tests: x + x. */
static cairn_status *double_it(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                               cairn_tensor **outputs, size_t n_outputs) {
  cairn_tensor *ins[2];
  (void)user_data;
  (void)n_inputs;
  (void)n_outputs;
  ins[0] = inputs[0];
  ins[1] = inputs[0];
  return cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &outputs[0], 1);
}

/* Events of `category` whose name starts with `prefix` (device `device` unless NULL); checks
 * that each starts at or after 0 and ends by `end_ns`. */
static int count_events(const cairn_profile *p, const char *category, const char *prefix, const char *device,
                        int64_t end_ns) {
  size_t n = 0, i;
  int found = 0;
  CHECK_OK(cairn_profile_event_count(p, &n));
  for (i = 0; i < n; ++i) {
    const char *name = NULL, *cat = NULL, *dev = NULL;
    int64_t start = -1, dur = -1;
    CHECK_OK(cairn_profile_event(p, i, &name, &cat, &dev, &start, &dur));
    if (strcmp(cat, category) != 0 || strncmp(name, prefix, strlen(prefix)) != 0) continue;
    ++found;
    CHECK(start >= 0 && dur >= 0 && start + dur <= end_ns);
    if (device) CHECK(strcmp(dev, device) == 0);
  }
  return found;
}

#endif /* CAIRN_TESTS_CAPI_PROFILE_CHECK_H_ */
