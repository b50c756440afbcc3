/* A tiny C test harness: CHECK records failures and keeps going; main returns the failure count. */
#ifndef CAIRN_TESTS_CAPI_CHECK_H_
#define CAIRN_TESTS_CAPI_CHECK_H_

#include <stdio.h>
#include <string.h>

#include "cairn/cairn.h"

static int g_checks = 0;
static int g_failures = 0;

#define CHECK(cond)                                                         \
  do {                                                                      \
    ++g_checks;                                                             \
    if (!(cond)) {                                                          \
      ++g_failures;                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                       \
  } while (0)

/* Takes ownership of `st`: expects success, prints the message otherwise. */
#define CHECK_OK(st)                                                                          \
  do {                                                                                        \
    cairn_status *check_st_ = (st);                                                           \
    ++g_checks;                                                                               \
    if (check_st_ != NULL) {                                                                  \
      ++g_failures;                                                                           \
      fprintf(stderr, "%s:%d: unexpected error %d: %s\n", __FILE__, __LINE__,                 \
              (int)cairn_status_code(check_st_), cairn_status_message(check_st_));            \
      cairn_status_free(check_st_);                                                           \
    }                                                                                         \
  } while (0)

/* Takes ownership of `st`: expects `code` and a message containing `fragment`. */
#define CHECK_ERR(st, code, fragment)                                                         \
  do {                                                                                        \
    cairn_status *check_st_ = (st);                                                           \
    ++g_checks;                                                                               \
    if (check_st_ == NULL) {                                                                  \
      ++g_failures;                                                                           \
      fprintf(stderr, "%s:%d: expected error containing \"%s\", got success\n", __FILE__,    \
              __LINE__, fragment);                                                            \
    } else {                                                                                  \
      if (cairn_status_code(check_st_) != (code) ||                                           \
          strstr(cairn_status_message(check_st_), fragment) == NULL) {                        \
        ++g_failures;                                                                         \
        fprintf(stderr, "%s:%d: expected code %d with \"%s\", got %d: %s\n", __FILE__,       \
                __LINE__, (int)(code), fragment, (int)cairn_status_code(check_st_),           \
                cairn_status_message(check_st_));                                             \
      }                                                                                       \
      cairn_status_free(check_st_);                                                           \
    }                                                                                         \
  } while (0)

/* A compiled function's body that returns its first input (cairn_function_fn). */
static inline cairn_status *check_identity_fn(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs,
                                              size_t n_inputs, cairn_tensor **outputs, size_t n_outputs) {
  (void)user_data;
  (void)ctx;
  (void)n_inputs;
  (void)n_outputs;
  return cairn_tensor_share(inputs[0], &outputs[0]);
}

#define TEST_MAIN_END()                                                   \
  do {                                                                    \
    printf("%d checks, %d failures\n", g_checks, g_failures);             \
    return g_failures == 0 ? 0 : 1;                                       \
  } while (0)

#endif
