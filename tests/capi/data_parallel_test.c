/* map, filter, interleave, prefetch, prefetch_to_device and cache through the C API: results,
 * random ops keyed by element (parallelism 1 == 4), save/restore with workers running, errors that
 * name the map and the element, close, four threads pulling from one iterator, release callbacks. */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"

static cairn_context *g_ctx;

typedef struct {
  int released;
  int calls; /* counted under g_mu: callbacks run on several worker threads at once */
} Host;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static void release_host(void *user_data) { ++((Host *)user_data)->released; }

static int calls_of(Host *h) {
  int n;
  pthread_mutex_lock(&g_mu);
  n = h->calls;
  pthread_mutex_unlock(&g_mu);
  return n;
}

/* For callbacks and pulling threads: no CHECK (its counters belong to the main thread). */
static int64_t read_i64(const cairn_tensor *t) {
  int64_t v = -12345;
  cairn_status *st = cairn_tensor_read(t, &v, sizeof v);
  cairn_status_free(st);
  return v;
}

static cairn_status *make_i64(cairn_context *ctx, int64_t v, cairn_tensor **out) {
  return cairn_tensor_create(ctx, CAIRN_INT64, NULL, 0, &v, sizeof v, out);
}

static int64_t i64_of(const cairn_tensor *t) {
  int64_t v = -12345;
  CHECK_OK(cairn_tensor_read(t, &v, sizeof v));
  return v;
}

/* y = x + x (compiles into an Add). */
static cairn_status *twice(void *user_data, cairn_context *ctx, cairn_tensor *const *in, size_t n_in,
                           cairn_tensor **out, size_t n_out) {
  cairn_tensor *ins[2];
  (void)n_in;
  (void)n_out;
  if (user_data) {
    pthread_mutex_lock(&g_mu);
    ++((Host *)user_data)->calls;
    pthread_mutex_unlock(&g_mu);
  }
  ins[0] = in[0];
  ins[1] = in[0];
  return cairn_op_run(ctx, "Add", ins, 2, NULL, 0, &out[0], 1);
}

/* x < 5 */
static cairn_status *below5(void *user_data, cairn_context *ctx, cairn_tensor *const *in, size_t n_in,
                            cairn_tensor **out, size_t n_out) {
  cairn_tensor *ins[2];
  cairn_status *st;
  (void)user_data;
  (void)n_in;
  (void)n_out;
  ins[0] = in[0];
  if ((st = make_i64(ctx, 5, &ins[1])) != NULL) return st;
  st = cairn_op_run(ctx, "Less", ins, 2, NULL, 0, &out[0], 1);
  cairn_tensor_free(ins[1]);
  return st;
}

/* Eager only: fails for x == 3 (INVALID_ARGUMENT) and x == 6 (OUT_OF_RANGE), else x. */
static cairn_status *picky(void *user_data, cairn_context *ctx, cairn_tensor *const *in, size_t n_in,
                           cairn_tensor **out, size_t n_out) {
  int64_t v = read_i64(in[0]);
  (void)user_data;
  (void)n_in;
  (void)n_out;
  if (v == 3) return cairn_status_create(CAIRN_INVALID_ARGUMENT, "three is refused");
  if (v == 6) return cairn_status_create(CAIRN_OUT_OF_RANGE, "six ran out");
  return make_i64(ctx, v, &out[0]);
}

/* (x, uniform[4]) with RandomUniform seeds 0,0. */
static cairn_status *noisy(void *user_data, cairn_context *ctx, cairn_tensor *const *in, size_t n_in,
                           cairn_tensor **out, size_t n_out) {
  static const int64_t shape[1] = {4};
  cairn_attr attr;
  (void)user_data;
  (void)n_in;
  (void)n_out;
  memset(&attr, 0, sizeof attr);
  attr.name = "shape";
  attr.kind = CAIRN_ATTR_INTS;
  attr.ints = shape;
  attr.n_ints = 1;
  {
    cairn_status *st = cairn_op_run(ctx, "Identity", in, 1, NULL, 0, &out[0], 1);
    if (st) return st;
  }
  return cairn_op_run(ctx, "RandomUniform", NULL, 0, &attr, 1, &out[1], 1);
}

/* x -> range(10x, 10x + 6) */
static cairn_status *tens(void *user_data, cairn_context *ctx, cairn_tensor *const *element, size_t n,
                          cairn_dataset **out) {
  int64_t x = read_i64(element[0]);
  (void)user_data;
  (void)n;
  if (x == 99) return cairn_status_create(CAIRN_NOT_FOUND, "no dataset for 99");
  return cairn_dataset_range(ctx, 10 * x, 10 * x + 6, 1, out);
}

static cairn_dataset *range(int64_t start, int64_t stop) {
  cairn_dataset *ds = NULL;
  CHECK_OK(cairn_dataset_range(g_ctx, start, stop, 1, &ds));
  return ds;
}

/* Every value of component 0 of `ds` (n_comp components) into out; returns the count (errors: -1). */
static int drain(cairn_object *it, size_t n_comp, int64_t *out, int max) {
  int n = 0;
  cairn_tensor *t[4] = {NULL, NULL, NULL, NULL};
  size_t k;
  for (;;) {
    cairn_status *st = cairn_iterator_next(it, t, n_comp);
    if (st) {
      int end = cairn_status_code(st) == CAIRN_OUT_OF_RANGE;
      if (!end) fprintf(stderr, "unexpected: %s\n", cairn_status_message(st));
      cairn_status_free(st);
      return end ? n : -1;
    }
    if (n < max) out[n] = i64_of(t[0]);
    ++n;
    for (k = 0; k < n_comp; ++k) cairn_tensor_free(t[k]);
  }
}

static int drain_dataset(const cairn_dataset *ds, int64_t *out, int max) {
  cairn_object *it = NULL;
  int n;
  CHECK_OK(cairn_dataset_iterate(ds, &it));
  n = drain(it, cairn_dataset_num_components(ds), out, max);
  cairn_object_free(it);
  return n;
}

static int same(const int64_t *a, const int64_t *b, int n) {
  int i;
  for (i = 0; i < n; ++i)
    if (a[i] != b[i]) return 0;
  return 1;
}

static void test_map_and_filter(void) {
  cairn_dataset *in = range(0, 10), *m = NULL, *f = NULL;
  cairn_map_options mo;
  cairn_filter_options fo;
  cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
  int64_t got[16], want[10];
  int i, compile;
  Host host = {0, 0};
  for (i = 0; i < 10; ++i) want[i] = 2 * i;
  for (compile = 0; compile <= 1; ++compile) {
    CHECK_OK(cairn_map_options_init(&mo, sizeof mo));
    mo.n_outputs = 1;
    mo.num_parallel_calls = 4;
    mo.compile = compile;
    spec.dtype = CAIRN_INT64;
    mo.output_specs = &spec;
    host.calls = 0;
    CHECK_OK(cairn_dataset_map(in, "twice", twice, &host, &mo, &m));
    CHECK(drain_dataset(m, got, 16) == 10);
    CHECK(same(got, want, 10));
    CHECK(calls_of(&host) == (compile ? 1 : 10)); /* traced once when built */
    cairn_dataset_free(m);
  }
  /* filter x < 5 over the map: 0, 2, 4 */
  CHECK_OK(cairn_map_options_init(&mo, sizeof mo));
  mo.n_outputs = 1;
  CHECK_OK(cairn_dataset_map(in, NULL, twice, NULL, &mo, &m));
  CHECK_OK(cairn_filter_options_init(&fo, sizeof fo));
  CHECK_OK(cairn_dataset_filter(m, "small", below5, NULL, &fo, &f));
  CHECK(cairn_dataset_cardinality(f) == CAIRN_UNKNOWN_CARDINALITY);
  CHECK(drain_dataset(f, got, 16) == 3);
  CHECK(got[0] == 0 && got[1] == 2 && got[2] == 4);
  cairn_dataset_free(f);
  /* a filter whose function is not a bool scalar fails when built */
  CHECK_ERR(cairn_dataset_filter(m, "wrong", twice, NULL, &fo, &f), CAIRN_INVALID_ARGUMENT,
            "filter 'wrong': the function returns int64[], expected a bool scalar");
  CHECK(f == NULL);
  cairn_dataset_free(m);
  /* bad arguments */
  mo.n_outputs = 0;
  CHECK_ERR(cairn_dataset_map(in, "f", twice, NULL, &mo, &m), CAIRN_INVALID_ARGUMENT, "n_outputs is 0");
  mo.n_outputs = 1;
  mo.compile = 0;
  mo.output_specs = NULL;
  CHECK_ERR(cairn_dataset_map(in, "f", twice, NULL, &mo, &m), CAIRN_INVALID_ARGUMENT, "output_specs are required");
  CHECK_ERR(cairn_dataset_map(in, "f", NULL, NULL, &mo, &m), CAIRN_INVALID_ARGUMENT, "fn is NULL");
  CHECK_ERR(cairn_dataset_map(NULL, "f", twice, NULL, &mo, &m), CAIRN_INVALID_ARGUMENT, "NULL");
  cairn_dataset_free(in);
}

static void test_errors(void) {
  cairn_dataset *in = range(0, 8), *m = NULL;
  cairn_map_options mo = CAIRN_MAP_OPTIONS_INIT;
  cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
  cairn_object *it = NULL;
  cairn_tensor *t = NULL;
  int64_t got[8];
  spec.dtype = CAIRN_INT64;
  mo.n_outputs = 1;
  mo.compile = 0;
  mo.output_specs = &spec;
  mo.num_parallel_calls = 3;
  CHECK_OK(cairn_dataset_map(in, "picky", picky, NULL, &mo, &m));
  CHECK_OK(cairn_dataset_iterate(m, &it));
  CHECK(drain(it, 1, got, 8) == -1); /* 0, 1, 2 then the error */
  CHECK_OK(cairn_iterator_next(it, &t, 1));
  CHECK(t && i64_of(t) == 4);
  cairn_tensor_free(t);
  CHECK_OK(cairn_iterator_next(it, &t, 1));
  cairn_tensor_free(t);
  CHECK_ERR(cairn_iterator_next(it, &t, 1), CAIRN_INVALID_ARGUMENT, "map 'picky' (element 6): ");
  CHECK(drain(it, 1, got, 8) == 1 && got[0] == 7);
  cairn_object_free(it);
  /* the message names the map and the element */
  CHECK_OK(cairn_dataset_iterate(m, &it));
  {
    int k;
    for (k = 0; k < 3; ++k) {
      CHECK_OK(cairn_iterator_next(it, &t, 1));
      cairn_tensor_free(t);
    }
    CHECK_ERR(cairn_iterator_next(it, &t, 1), CAIRN_INVALID_ARGUMENT, "map 'picky' (element 3): ");
  }
  cairn_object_free(it);
  cairn_dataset_free(m);
  cairn_dataset_free(in);
}

static void test_random_determinism(void) {
  cairn_dataset *in = range(0, 40), *m1 = NULL, *m4 = NULL;
  cairn_map_options mo = CAIRN_MAP_OPTIONS_INIT;
  cairn_object *a = NULL, *b = NULL;
  cairn_tensor *ta[2], *tb[2];
  float va[4], vb[4], first[4];
  int k, equal = 1, differs = 0, compile;
  for (compile = 0; compile <= 1; ++compile) {
    cairn_tensor_spec specs[2] = {CAIRN_TENSOR_SPEC_INIT, CAIRN_TENSOR_SPEC_INIT};
    int64_t four = 4;
    specs[0].dtype = CAIRN_INT64;
    specs[1].dtype = CAIRN_FLOAT32;
    specs[1].shape = &four;
    specs[1].rank = 1;
    mo.n_outputs = 2;
    mo.compile = compile;
    mo.output_specs = compile ? NULL : specs;
    mo.num_parallel_calls = 1;
    CHECK_OK(cairn_dataset_map(in, "noise", noisy, NULL, &mo, &m1));
    mo.num_parallel_calls = 4;
    CHECK_OK(cairn_dataset_map(in, "noise", noisy, NULL, &mo, &m4));
    CHECK_OK(cairn_dataset_iterate(m1, &a));
    CHECK_OK(cairn_dataset_iterate(m4, &b));
    for (k = 0; k < 40; ++k) {
      CHECK_OK(cairn_iterator_next(a, ta, 2));
      CHECK_OK(cairn_iterator_next(b, tb, 2));
      CHECK_OK(cairn_tensor_read(ta[1], va, sizeof va));
      CHECK_OK(cairn_tensor_read(tb[1], vb, sizeof vb));
      if (memcmp(va, vb, sizeof va) != 0) equal = 0;
      if (k == 0) memcpy(first, va, sizeof va);
      else if (memcmp(first, va, sizeof va) != 0) differs = 1;
      cairn_tensor_free(ta[0]);
      cairn_tensor_free(ta[1]);
      cairn_tensor_free(tb[0]);
      cairn_tensor_free(tb[1]);
    }
    CHECK(equal);
    CHECK(differs);
    cairn_object_free(a);
    cairn_object_free(b);
    cairn_dataset_free(m1);
    cairn_dataset_free(m4);
  }
  cairn_dataset_free(in);
}

static void test_interleave(void) {
  /* TF's documented pattern (cycle_length 2, block_length 4), with inner datasets range(10x, 10x+6). */
  static const int64_t want[30] = {10, 11, 12, 13, 20, 21, 22, 23, 14, 15, 24, 25, 30, 31, 32,
                                   33, 40, 41, 42, 43, 34, 35, 44, 45, 50, 51, 52, 53, 54, 55};
  cairn_dataset *in = range(1, 6), *bad_in = range(99, 100), *il = NULL;
  cairn_interleave_options io;
  cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
  const char *names[1] = {"value"};
  const char *wrong[1] = {"other"};
  int64_t got[40];
  cairn_object *it = NULL;
  cairn_tensor *t = NULL;
  int npc;
  Host host = {0, 0};
  spec.dtype = CAIRN_INT64;
  for (npc = 0; npc <= 2; ++npc) {
    CHECK_OK(cairn_interleave_options_init(&io, sizeof io));
    io.cycle_length = 2;
    io.block_length = 4;
    io.num_parallel_calls = npc;
    io.release = release_host;
    CHECK_OK(cairn_dataset_interleave(in, tens, &host, names, &spec, 1, &io, &il));
    CHECK(drain_dataset(il, got, 40) == 30);
    CHECK(same(got, want, 30));
    CHECK(host.released == 0);
    cairn_dataset_free(il);
    CHECK(host.released == 1);
    host.released = 0;
  }
  /* a spec that does not match the inner datasets, a failing function */
  CHECK_OK(cairn_interleave_options_init(&io, sizeof io));
  CHECK_OK(cairn_dataset_interleave(in, tens, NULL, wrong, &spec, 1, &io, &il));
  CHECK_OK(cairn_dataset_iterate(il, &it));
  CHECK_ERR(cairn_iterator_next(it, &t, 1), CAIRN_INVALID_ARGUMENT, "interleave (element 0): the function's dataset has spec");
  cairn_object_free(it);
  cairn_dataset_free(il);
  CHECK_OK(cairn_dataset_interleave(bad_in, tens, NULL, names, &spec, 1, &io, &il));
  CHECK_OK(cairn_dataset_iterate(il, &it));
  CHECK_ERR(cairn_iterator_next(it, &t, 1), CAIRN_NOT_FOUND, "interleave (element 0): the function failed: no dataset for 99");
  CHECK_ERR(cairn_iterator_next(it, &t, 1), CAIRN_OUT_OF_RANGE, "end of data");
  cairn_object_free(it);
  cairn_dataset_free(il);
  io.cycle_length = 0;
  CHECK_ERR(cairn_dataset_interleave(in, tens, NULL, names, &spec, 1, &io, &il), CAIRN_INVALID_ARGUMENT,
            "cycle_length is 0");
  cairn_dataset_free(in);
  cairn_dataset_free(bad_in);
}

/* Parallel map + prefetch; save after `cut` elements, restore into a new iterator, compare. */
static void test_save_restore(void) {
  cairn_dataset *in = range(0, 50), *m = NULL, *p = NULL;
  cairn_map_options mo = CAIRN_MAP_OPTIONS_INIT;
  int64_t ref[50], got[50];
  int cut;
  mo.n_outputs = 2;
  mo.num_parallel_calls = 4;
  CHECK_OK(cairn_dataset_map(in, "noise", noisy, NULL, &mo, &m));
  CHECK_OK(cairn_dataset_prefetch(m, 5, &p));
  CHECK(drain_dataset(p, ref, 50) == 50);
  for (cut = 0; cut <= 50; cut += 7) {
    cairn_object *a = NULL, *b = NULL;
    cairn_tensor *t[2];
    void *state = NULL;
    size_t n = 0;
    float x[4], y[4];
    int k, ok = 1;
    CHECK_OK(cairn_dataset_iterate(p, &a));
    for (k = 0; k < cut; ++k) {
      CHECK_OK(cairn_iterator_next(a, t, 2));
      cairn_tensor_free(t[0]);
      cairn_tensor_free(t[1]);
    }
    CHECK_OK(cairn_iterator_save(a, &state, &n));
    CHECK(n > 0 && n < 200); /* a few integers */
    CHECK_OK(cairn_dataset_iterate(p, &b));
    CHECK_OK(cairn_iterator_restore(b, state, n));
    cairn_free(state);
    for (k = cut; k < 50; ++k) {
      cairn_tensor *u[2];
      CHECK_OK(cairn_iterator_next(a, t, 2));
      CHECK_OK(cairn_iterator_next(b, u, 2));
      CHECK_OK(cairn_tensor_read(t[1], x, sizeof x));
      CHECK_OK(cairn_tensor_read(u[1], y, sizeof y));
      if (i64_of(u[0]) != ref[k] || memcmp(x, y, sizeof x) != 0) ok = 0;
      cairn_tensor_free(t[0]);
      cairn_tensor_free(t[1]);
      cairn_tensor_free(u[0]);
      cairn_tensor_free(u[1]);
    }
    CHECK(ok);
    CHECK(drain(b, 2, got, 50) == 0);
    cairn_object_free(a);
    cairn_object_free(b);
  }
  cairn_dataset_free(p);
  cairn_dataset_free(m);
  cairn_dataset_free(in);
}

static void test_prefetch_cache_close(void) {
  cairn_dataset *in = range(0, 100000), *small = range(0, 6), *p = NULL, *c = NULL, *m = NULL;
  cairn_map_options mo = CAIRN_MAP_OPTIONS_INIT;
  cairn_object *it = NULL;
  cairn_tensor *t = NULL;
  int64_t got[8];
  char path[512];
  const char *dir = getenv("TEST_TMPDIR");
  FILE *f;
  Host host = {0, 0};
  CHECK_OK(cairn_dataset_prefetch(small, CAIRN_AUTOTUNE, &p));
  CHECK(drain_dataset(p, got, 8) == 6 && got[5] == 5);
  cairn_dataset_free(p);
  CHECK_ERR(cairn_dataset_prefetch(small, 0, &p), CAIRN_INVALID_ARGUMENT, "buffer_size is 0");
  CHECK_ERR(cairn_dataset_prefetch(small, -2, &p), CAIRN_INVALID_ARGUMENT, "buffer_size is -2");
  CHECK_OK(cairn_dataset_prefetch_to_device(small, "cpu", 2, &p));
  CHECK(drain_dataset(p, got, 8) == 6 && got[3] == 3);
  cairn_dataset_free(p);
  CHECK_ERR(cairn_dataset_prefetch_to_device(small, "tpu", 2, &p), CAIRN_NOT_FOUND, "tpu");
  /* memory cache: the function runs once per element however many passes */
  mo.n_outputs = 1;
  mo.compile = 0;
  {
    cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
    spec.dtype = CAIRN_INT64;
    mo.output_specs = &spec;
    mo.release = release_host;
    CHECK_OK(cairn_dataset_map(small, "twice", twice, &host, &mo, &m));
  }
  CHECK_OK(cairn_dataset_cache(m, NULL, &c));
  CHECK(drain_dataset(c, got, 8) == 6 && got[5] == 10);
  CHECK(drain_dataset(c, got, 8) == 6 && got[5] == 10);
  CHECK(calls_of(&host) == 6);
  cairn_dataset_free(c);
  /* file cache */
  snprintf(path, sizeof path, "%s/data_parallel_test.cache", dir ? dir : "/tmp");
  remove(path);
  CHECK_OK(cairn_dataset_cache(m, path, &c));
  CHECK(drain_dataset(c, got, 8) == 6 && got[2] == 4);
  f = fopen(path, "rb");
  CHECK(f != NULL);
  if (f) fclose(f);
  CHECK(drain_dataset(c, got, 8) == 6 && got[2] == 4);
  CHECK(calls_of(&host) == 12); /* the second pass read the file */
  cairn_dataset_free(c);
  CHECK(host.released == 0);
  cairn_dataset_free(m);
  CHECK(host.released == 1); /* the last dataset using the function went */
  remove(path);
  /* close with workers running: returns promptly, later nexts fail */
  mo.num_parallel_calls = 4;
  mo.release = NULL;
  CHECK_OK(cairn_dataset_map(in, "twice", twice, NULL, &mo, &m));
  CHECK_OK(cairn_dataset_prefetch(m, 16, &p));
  CHECK_OK(cairn_dataset_iterate(p, &it));
  CHECK_OK(cairn_iterator_next(it, &t, 1));
  cairn_tensor_free(t);
  CHECK_OK(cairn_iterator_close(it));
  CHECK_OK(cairn_iterator_close(it));
  CHECK_ERR(cairn_iterator_next(it, &t, 1), CAIRN_FAILED_PRECONDITION, "");
  cairn_object_free(it);
  cairn_dataset_free(p);
  cairn_dataset_free(m);
  cairn_dataset_free(in);
  cairn_dataset_free(small);
}

static void test_vulkan(void) {
  cairn_context *vk = NULL;
  cairn_dataset *in = NULL, *p = NULL;
  cairn_object *it = NULL;
  cairn_tensor *t = NULL;
  int k;
  if (!cairn_vulkan_available()) {
    printf("no Vulkan device: prefetch_to_device(vulkan) skipped\n");
    return;
  }
  CHECK_OK(cairn_context_create_vulkan(NULL, NULL, &vk));
  if (!vk) return;
  CHECK_OK(cairn_dataset_range(vk, 0, 5, 1, &in));
  CHECK_OK(cairn_dataset_prefetch_to_device(in, "vulkan", 2, &p));
  CHECK_OK(cairn_dataset_iterate(p, &it));
  for (k = 0; k < 5; ++k) {
    CHECK_OK(cairn_iterator_next(it, &t, 1));
    CHECK(t && strncmp(cairn_tensor_device(t), "vulkan", 6) == 0);
    CHECK(t && i64_of(t) == k);
    cairn_tensor_free(t);
  }
  CHECK_ERR(cairn_iterator_next(it, &t, 1), CAIRN_OUT_OF_RANGE, "end of data");
  cairn_object_free(it);
  cairn_dataset_free(p);
  cairn_dataset_free(in);
  cairn_context_free(vk);
}

/* Four threads pulling from one iterator: every element exactly once. */
typedef struct {
  cairn_object *it;
  int64_t sum;
  int count;
} Puller;

static void *pull(void *arg) {
  Puller *p = (Puller *)arg;
  cairn_tensor *t = NULL;
  for (;;) {
    cairn_status *st = cairn_iterator_next(p->it, &t, 1);
    if (st) {
      cairn_status_free(st);
      return NULL;
    }
    p->sum += read_i64(t);
    ++p->count;
    cairn_tensor_free(t);
  }
}

static void test_four_threads(void) {
  cairn_dataset *in = range(0, 2000), *m = NULL, *p = NULL;
  cairn_map_options mo = CAIRN_MAP_OPTIONS_INIT;
  cairn_object *it = NULL;
  Puller pullers[4];
  pthread_t threads[4];
  int64_t sum = 0;
  int count = 0, k;
  mo.n_outputs = 1;
  mo.num_parallel_calls = 3;
  CHECK_OK(cairn_dataset_map(in, "twice", twice, NULL, &mo, &m));
  CHECK_OK(cairn_dataset_prefetch(m, 8, &p));
  CHECK_OK(cairn_dataset_iterate(p, &it));
  for (k = 0; k < 4; ++k) {
    pullers[k].it = it;
    pullers[k].sum = 0;
    pullers[k].count = 0;
    pthread_create(&threads[k], NULL, pull, &pullers[k]);
  }
  for (k = 0; k < 4; ++k) {
    pthread_join(threads[k], NULL);
    sum += pullers[k].sum;
    count += pullers[k].count;
  }
  CHECK(count == 2000);
  CHECK(sum == 2 * (int64_t)1999 * 2000 / 2);
  cairn_object_free(it);
  cairn_dataset_free(p);
  cairn_dataset_free(m);
  cairn_dataset_free(in);
}

int main(void) {
  cairn_context_options opts = CAIRN_CONTEXT_OPTIONS_INIT;
  opts.seed = 7;
  CHECK_OK(cairn_context_create(&opts, &g_ctx));
  test_map_and_filter();
  test_errors();
  test_random_determinism();
  test_interleave();
  test_save_restore();
  test_prefetch_cache_close();
  test_vulkan();
  test_four_threads();
  cairn_context_free(g_ctx);
  TEST_MAIN_END();
}
