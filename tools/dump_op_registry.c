/* Prints the op registry as JSON (cairn_op_registry_json); bindings/gen reads it to emit op wrappers. */
#include <stdio.h>

#include "cairn/cairn.h"

int main(void) {
  char *json = NULL;
  cairn_status *s = cairn_op_registry_json(&json);
  if (s) {
    fprintf(stderr, "dump_op_registry: %s\n", cairn_status_message(s));
    cairn_status_free(s);
    return 1;
  }
  printf("%s\n", json);
  cairn_free(json);
  return 0;
}
