/* Compiled with -std=c99 -Wall -Wextra -pedantic -Werror: the header must be clean C99. */
#include "cairn/cairn.h"

int cairn_header_c99_probe(void);
int cairn_header_c99_probe(void) {
  cairn_context_options opts = CAIRN_CONTEXT_OPTIONS_INIT;
  return (int)opts.struct_size + (int)CAIRN_ABI_VERSION;
}
