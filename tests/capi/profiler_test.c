/* The profiler through the C API: eager ops, a function's replay node by node, the cap on events,
 * the exports (Chrome trace JSON, the TensorBoard logdir layout), and the errors. */
#include <stdlib.h>
#include <sys/stat.h>

#include "profile_check.h"

int main(void) {
  cairn_context *ctx = NULL;
  cairn_function *fn = NULL;
  cairn_tensor *x = NULL, *y = NULL, *ins[2];
  cairn_profile *p = NULL;
  cairn_profiler_options opts = CAIRN_PROFILER_OPTIONS_INIT;
  const float xv[2] = {1, 2};
  const int64_t two = 2;
  size_t n = 0;
  uint64_t dropped = 7;
  char *json = NULL, *path = NULL, file[512];
  const char *tmp = getenv("TEST_TMPDIR");
  struct stat sb;
  int i;

  if (!tmp) tmp = "/tmp";
  CHECK_OK(cairn_context_create(NULL, &ctx));
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, &two, 1, xv, sizeof xv, &x));
  CHECK_OK(cairn_function_create(ctx, "double_it", double_it, NULL, NULL, &fn));
  CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1)); /* traced outside the profile */
  cairn_tensor_free(y);

  /* Errors: stopping while off, starting twice, a bad option. */
  CHECK(!cairn_profiler_active());
  CHECK_ERR(cairn_profiler_stop(&p), CAIRN_FAILED_PRECONDITION, "off");
  opts.max_events = 0;
  CHECK_ERR(cairn_profiler_start(&opts), CAIRN_INVALID_ARGUMENT, "max_events");
  CHECK_OK(cairn_profiler_start(NULL));
  CHECK(cairn_profiler_active());
  CHECK_ERR(cairn_profiler_start(NULL), CAIRN_FAILED_PRECONDITION, "already on");

  /* Eager: three Adds. Replay: its Add node and the function. */
  ins[0] = x;
  ins[1] = x;
  for (i = 0; i < 3; ++i) {
    CHECK_OK(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &y, 1));
    cairn_tensor_free(y);
  }
  CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1));
  cairn_tensor_free(y);
  CHECK_OK(cairn_profiler_stop(&p));
  CHECK(!cairn_profiler_active());
  CHECK(count_events(p, "eager", "Add", "cpu", INT64_MAX) == 3);
  CHECK(count_events(p, "function", "double_it", "cpu", INT64_MAX) == 1);
  CHECK_OK(cairn_profile_event_count(p, &n));
  {
    const char *en = NULL;
    int graph_nodes = 0;
    size_t k;
    for (k = 0; k < n; ++k) {
      const char *cat = NULL;
      CHECK_OK(cairn_profile_event(p, k, &en, &cat, NULL, NULL, NULL));
      if (strcmp(cat, "graph") == 0) {
        ++graph_nodes;
        /* the CPU may replay a fused plan: a FusedElementwise node for the Add */
        CHECK(strncmp(en, "Add_", 4) == 0 || strncmp(en, "FusedElementwise_", 17) == 0);
      }
    }
    CHECK(graph_nodes == 1);
    CHECK(n == (size_t)(4 + graph_nodes)); /* 3 Adds, the nodes, the replay */
  }
  CHECK_ERR(cairn_profile_event(p, n, NULL, NULL, NULL, NULL, NULL), CAIRN_OUT_OF_RANGE, "beyond");
  CHECK_OK(cairn_profile_dropped(p, &dropped));
  CHECK(dropped == 0);

  /* Exports. */
  CHECK_OK(cairn_profile_chrome_trace(p, &json));
  CHECK(json && strstr(json, "\"traceEvents\":[") && strstr(json, "\"ph\":\"X\",\"cat\":\"eager\",\"name\":\"Add\""));
  CHECK(json && strstr(json, "\"displayTimeUnit\":\"ns\""));
  cairn_free(json);
  snprintf(file, sizeof file, "%s/profile.json", tmp);
  CHECK_OK(cairn_profile_export_chrome_trace(p, file));
  CHECK(stat(file, &sb) == 0 && sb.st_size > 100);
  snprintf(file, sizeof file, "%s/logs", tmp);
  CHECK_OK(cairn_profile_export_to_logdir(p, file, "run1", &path));
  CHECK(path && strstr(path, "/logs/plugins/profile/run1/") && strstr(path, ".trace.json.gz"));
  CHECK(path && stat(path, &sb) == 0 && sb.st_size > 50);
  cairn_free(path);
  CHECK_ERR(cairn_profile_export_to_logdir(p, file, "a/b", NULL), CAIRN_INVALID_ARGUMENT, "one path component");
  CHECK_ERR(cairn_profile_export_chrome_trace(p, "/nonexistent-dir/x.json"), CAIRN_UNAVAILABLE, "/nonexistent-dir");
  cairn_profile_free(p);
  cairn_profile_free(NULL);

  /* The cap: 2 events kept, the rest counted; a new start clears the old events. */
  opts.max_events = 2;
  CHECK_OK(cairn_profiler_start(&opts));
  for (i = 0; i < 5; ++i) {
    CHECK_OK(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &y, 1));
    cairn_tensor_free(y);
  }
  CHECK_OK(cairn_profiler_stop(&p));
  CHECK_OK(cairn_profile_event_count(p, &n));
  CHECK(n == 2);
  CHECK_OK(cairn_profile_dropped(p, &dropped));
  CHECK(dropped == 3);
  cairn_profile_free(p);

  /* Off again: nothing is recorded. */
  CHECK_OK(cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &y, 1));
  cairn_tensor_free(y);
  CHECK_OK(cairn_profiler_start(NULL));
  CHECK_OK(cairn_profiler_stop(&p));
  CHECK_OK(cairn_profile_event_count(p, &n));
  CHECK(n == 0);
  cairn_profile_free(p);

  cairn_tensor_free(x);
  cairn_function_free(fn);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
