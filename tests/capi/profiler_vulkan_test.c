/* The profiler on Vulkan (lavapipe): GPU timestamps become "gpu" events labelled with the op or the
 * replayed node that recorded the work, on the host clock inside the profile; without
 * vulkan_timestamps only host events are recorded. */
#include "profile_check.h"

int main(void) {
  cairn_context *ctx = NULL;
  cairn_function *fn = NULL;
  cairn_tensor *x = NULL, *y = NULL, *ins[2];
  cairn_profile *p = NULL;
  cairn_profiler_options opts = CAIRN_PROFILER_OPTIONS_INIT;
  const float xv[4] = {1, 2, 3, 4};
  const int64_t four = 4;
  float out[4];
  int i;
  char *json = NULL;

  CHECK_OK(cairn_context_create_vulkan(NULL, NULL, &ctx));
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, &four, 1, xv, sizeof xv, &x));
  CHECK_OK(cairn_function_create(ctx, "double_it", double_it, NULL, NULL, &fn));
  CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1));
  cairn_tensor_free(y);
  CHECK_OK(cairn_context_synchronize(ctx));

  ins[0] = x;
  ins[1] = x;
  CHECK_OK(cairn_profiler_start(NULL));
  for (i = 0; i < 3; ++i) {
    CHECK_OK(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &y, 1));
    if (i < 2) cairn_tensor_free(y);
  }
  CHECK_OK(cairn_tensor_read(y, out, sizeof out)); /* waits for the GPU */
  CHECK(out[3] == 8);
  cairn_tensor_free(y);
  CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1));
  cairn_tensor_free(y); /* not waited for: stopping the profiler collects it */
  CHECK_OK(cairn_profiler_stop(&p));
  {
    int64_t end = 0;
    size_t n = 0;
    CHECK_OK(cairn_profile_event_count(p, &n));
    CHECK(n > 0);
    /* the profile's length bounds every event: take the latest end */
    for (i = 0; i < (int)n; ++i) {
      int64_t s = 0, d = 0;
      CHECK_OK(cairn_profile_event(p, (size_t)i, NULL, NULL, NULL, &s, &d));
      if (s + d > end) end = s + d;
    }
    CHECK(count_events(p, "eager", "Add", NULL, end) == 3);
    CHECK(count_events(p, "gpu", "Add", "vulkan:0", end) >= 4); /* three eager Adds and the replayed Add node */
    CHECK(count_events(p, "graph", "", NULL, end) >= 1);
    CHECK(count_events(p, "function", "double_it", NULL, end) == 1);
  }
  CHECK_OK(cairn_profile_chrome_trace(p, &json));
  CHECK(json && strstr(json, "\"cat\":\"gpu\"") && strstr(json, "\"name\":\"GPU\""));
  cairn_free(json);
  cairn_profile_free(p);

  /* Without GPU timestamps: host events only. */
  opts.vulkan_timestamps = 0;
  CHECK_OK(cairn_profiler_start(&opts));
  CHECK_OK(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &y, 1));
  CHECK_OK(cairn_tensor_read(y, out, sizeof out));
  cairn_tensor_free(y);
  CHECK_OK(cairn_profiler_stop(&p));
  CHECK(count_events(p, "gpu", "", NULL, INT64_MAX) == 0);
  CHECK(count_events(p, "eager", "Add", NULL, INT64_MAX) == 1);
  cairn_profile_free(p);

  cairn_tensor_free(x);
  cairn_function_free(fn);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
