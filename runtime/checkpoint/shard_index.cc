#include "runtime/checkpoint/shard_index.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "runtime/checkpoint/internal/index.h"
#include "runtime/checkpoint/internal/io.h"
#include "runtime/core/error.h"

namespace cairn::ckpt {
namespace {

const std::string kHeaderLine = std::string(kShardIndexMagic, 8) + " " + std::to_string(kShardIndexVersion);

// Keys may hold any byte; spaces, control bytes and '%' become %XX so a key stays on its line.
std::string escape_key(std::string_view key) {
  std::string out;
  for (unsigned char c : key) {
    if (c <= ' ' || c == '%' || c == 0x7f)
      out += fmt::format("%{:02X}", c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

bool unescape_key(std::string_view text, std::string& out) {
  out.clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return false;
    unsigned v = 0;
    if (std::sscanf(std::string(text.substr(i + 1, 2)).c_str(), "%2X", &v) != 1) return false;
    out += static_cast<char>(v);
    i += 2;
  }
  return true;
}

std::string hex(uint64_t v) { return fmt::format("{:016x}", v); }

bool parse_hex(const std::string& s, uint64_t& v) {
  if (s.empty() || s.size() > 16 || s.find_first_not_of("0123456789abcdef") != std::string::npos) return false;
  v = std::stoull(s, nullptr, 16);
  return true;
}

[[noreturn]] void damaged(std::string_view path, std::string_view what) {
  raise(Code::DataLoss, "{}: damaged shard index: {}", path, what);
}

// The graph of every shard is the same but for attributes: each lists its own values'. Checks the
// rest agrees and returns the graph with every shard's attributes (by name within a node).
ObjectGraph merge_graphs(const std::vector<Reader>& shards, std::string_view path) {
  ObjectGraph merged = shards.front().graph();
  for (size_t s = 1; s < shards.size(); ++s) {
    const ObjectGraph& g = shards[s].graph();
    if (g.nodes.size() != merged.nodes.size()) damaged(path, fmt::format("shard {} has another object graph", s));
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node& m = merged.nodes[i];
      const Node& n = g.nodes[i];
      if (n.kind != m.kind || n.children != m.children || n.slots != m.slots)
        damaged(path, fmt::format("shard {} has another object graph (node {})", s, i));
      m.attributes.insert(m.attributes.end(), n.attributes.begin(), n.attributes.end());
    }
  }
  for (Node& n : merged.nodes)
    std::sort(n.attributes.begin(), n.attributes.end(),
              [](const Attribute& a, const Attribute& b) { return a.name < b.name; });
  return merged;
}

}  // namespace

std::string encode_shard_index(const ShardIndex& index) {
  std::string body = kHeaderLine + "\n";
  body += fmt::format("shards {}\n", index.shards.size());
  for (size_t r = 0; r < index.shards.size(); ++r) {
    const ShardFile& s = index.shards[r];
    body += fmt::format("shard {} {} {} {}\n", r, s.file, s.size, hex(s.checksum));
  }
  for (const auto& [key, shard] : index.keys) body += fmt::format("key {} {}\n", shard, escape_key(key));
  return body + "checksum " + hex(checksum(body.data(), body.size())) + "\n";
}

ShardIndex parse_shard_index(std::string_view text, std::string_view path) {
  size_t pos = text.rfind("checksum ");
  if (pos == std::string_view::npos || text.empty() || text.back() != '\n') damaged(path, "no checksum line");
  uint64_t want = 0;
  if (!parse_hex(std::string(text.substr(pos + 9, text.size() - pos - 10)), want) ||
      (kEnforceChecksums && want != checksum(text.data(), pos)))
    damaged(path, "checksum mismatch");
  std::istringstream lines{std::string(text.substr(0, pos))};
  std::string line;
  if (!std::getline(lines, line) || line != kHeaderLine)
    damaged(path, fmt::format("the first line is not \"{}\"", kHeaderLine));
  ShardIndex index;
  size_t count = 0;
  if (!std::getline(lines, line) || std::sscanf(line.c_str(), "shards %zu", &count) != 1 || count == 0 || count > 1u << 20)
    damaged(path, "no shard count");
  for (size_t r = 0; r < count; ++r) {
    std::istringstream words(std::getline(lines, line) ? line : "");
    std::string kind, sum;
    size_t rank = 0;
    ShardFile f;
    if (!(words >> kind >> rank >> f.file >> f.size >> sum) || kind != "shard" || rank != r ||
        !parse_hex(sum, f.checksum) || f.file.find('/') != std::string::npos)
      damaged(path, fmt::format("shard line {} is malformed", r));
    index.shards.push_back(std::move(f));
  }
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string kind, escaped, key;
    uint32_t shard = 0;
    if (!(words >> kind >> shard >> escaped) || kind != "key" || shard >= count || !unescape_key(escaped, key))
      damaged(path, fmt::format("line \"{}\" is malformed", line));
    if (!index.keys.empty() && !(index.keys.back().first < key)) damaged(path, "keys are not sorted and unique");
    index.keys.emplace_back(std::move(key), shard);
  }
  return index;
}

ShardIndex read_shard_index(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(Code::NotFound, "{}: no such shard index", path);
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_shard_index(buf.str(), path);
}

bool is_shard_index(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char b[8] = {};
  return in.read(b, sizeof b) && std::equal(b, b + 8, kShardIndexMagic);
}

bool is_intact_checkpoint(const std::string& path) {
  try {
    if (is_shard_index(path))
      ShardedReader::open(path);
    else
      Reader::open(path);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

ShardFile describe_shard(const std::string& path) {
  internal::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) internal::raise_errno(errno, path, "cannot open the shard");
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) internal::raise_errno(errno, path, "cannot stat the shard");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < kHeaderSize + kFooterSize) raise(Code::DataLoss, "{}: too short for a checkpoint shard", path);
  uint8_t footer[kFooterSize];
  internal::pread_exact(fd.get(), footer, kFooterSize, size - kFooterSize, path);
  return ShardFile{internal::base_name(path), size, decode_footer(footer, path).index_checksum};
}

std::string shard_file_name(const std::string& index_file_name, int rank, int count, uint64_t nonce) {
  return fmt::format("{}.shard-{}-of-{}-{}", index_file_name, rank, count, hex(nonce));
}

bool is_shard_file_name(const std::string& file_name, const std::string& checkpoint_name) {
  const std::string prefix = checkpoint_name + "-";
  size_t at = file_name.find(".shard-");
  if (file_name.rfind(prefix, 0) != 0 || at == std::string::npos || at == prefix.size()) return false;
  return std::all_of(file_name.begin() + prefix.size(), file_name.begin() + at, ::isdigit);
}

std::vector<int> assign_shards(const std::vector<std::pair<std::string, uint64_t>>& sized_keys, int count) {
  if (count <= 0) raise(Code::InvalidArgument, "assign_shards: {} shards", count);
  std::vector<size_t> order(sized_keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sized_keys[a].second != sized_keys[b].second) return sized_keys[a].second > sized_keys[b].second;
    return sized_keys[a].first < sized_keys[b].first;
  });
  std::vector<uint64_t> load(count, 0);
  std::vector<int> out(sized_keys.size(), 0);
  for (size_t i : order) {
    int lightest = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    out[i] = lightest;
    load[lightest] += sized_keys[i].second;
  }
  return out;
}

std::shared_ptr<ShardedReader> ShardedReader::open(const std::string& index_path) {
  auto r = std::make_shared<ShardedReader>();
  r->path_ = index_path;
  const ShardIndex index = read_shard_index(index_path);
  const std::string dir = internal::dir_name(index_path);
  std::map<std::string, uint32_t> listed(index.keys.begin(), index.keys.end());
  std::map<std::string, std::pair<TensorInfo, uint32_t>> found;
  for (uint32_t s = 0; s < index.shards.size(); ++s) {
    const ShardFile& want = index.shards[s];
    const std::string shard_path = dir + "/" + want.file;
    if (!(describe_shard(shard_path) == want))
      raise(Code::DataLoss, "{}: shard {} ({}) is not the file the index names (size or checksum differ)", index_path, s,
            want.file);
    r->shards_.push_back(Reader::open(shard_path));
    for (const TensorInfo& e : r->shards_.back().entries()) {
      if (e.key == kObjectGraphKey) {
        if (s == 0) found.emplace(e.key, std::make_pair(e, s));
        continue;
      }
      auto it = listed.find(e.key);
      if (it == listed.end() || it->second != s)
        raise(Code::DataLoss, "{}: shard {} holds '{}', which the index does not place there", index_path, s, e.key);
      found.emplace(e.key, std::make_pair(e, s));
    }
  }
  for (const auto& [key, shard] : index.keys)
    if (!found.count(key)) raise(Code::DataLoss, "{}: '{}' is missing from shard {}", index_path, key, shard);
  for (auto& [key, entry] : found) {
    r->entries_.push_back(entry.first);
    r->entry_shard_.push_back(entry.second);
  }
  r->graph_ = merge_graphs(r->shards_, index_path);
  return r;
}

const TensorInfo* ShardedReader::find(std::string_view key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const TensorInfo& e, std::string_view k) { return e.key < k; });
  return it != entries_.end() && it->key == key ? &*it : nullptr;
}

const Reader& ShardedReader::shard_of(std::string_view key) const {
  const TensorInfo* e = find(key);
  if (!e) raise(Code::NotFound, "{}: no key named '{}'", path_, key);
  return shards_[entry_shard_[e - entries_.data()]];
}

std::string ShardedReader::load_string(std::string_view key) const {
  if (key != kObjectGraphKey) return shard_of(key).load_string(key);
  std::vector<std::string_view> keys;
  for (const TensorInfo& e : entries_) keys.push_back(e.key);  // as the writer: the graph's own key too
  return internal::build_object_graph(graph_, keys);
}

}  // namespace cairn::ckpt
