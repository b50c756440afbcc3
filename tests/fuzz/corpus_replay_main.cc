// Runs the fuzz target over every file given on the command line or found in the directories
// given (a gcc build of the target, for plain test runs).
#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (DIR* d = opendir(argv[i])) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') files.push_back(std::string(argv[i]) + "/" + e->d_name);
      closedir(d);
    } else {
      files.push_back(argv[i]);
    }
  }
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Every prefix too: truncations at each length.
    for (size_t len = 0; len <= bytes.size(); ++len) LLVMFuzzerTestOneInput(bytes.data(), len);
  }
  std::printf("replayed %zu corpus files and all their prefixes\n", files.size());
  return files.empty() ? 1 : 0;
}
