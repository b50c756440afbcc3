// Compiled with -std=c++17 -Wall -Wextra -pedantic -Werror: the header must be clean C++ too.
#include "cairn/cairn.h"

extern "C" int cairn_header_c99_probe(void);

int main() {
  cairn_context_options opts = CAIRN_CONTEXT_OPTIONS_INIT;
  // Both translation units agree on the struct layout and the macro.
  return (cairn_header_c99_probe() == static_cast<int>(opts.struct_size + CAIRN_ABI_VERSION)) ? 0 : 1;
}
