#include "runtime/checkpoint/manager.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "runtime/checkpoint/reader.h"
#include "runtime/checkpoint/shard_index.h"
#include "runtime/core/error.h"

namespace fs = std::filesystem;

namespace cairn::ckpt {

namespace {

constexpr const char* kStateHeader = "cairn-checkpoint-state 1";

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string errno_text() { return std::strerror(errno); }

uint64_t checksum(const std::string& s) { return XXH3_64bits(s.data(), s.size()); }

// "<name>-<N>" -> N, or nullopt for anything else.
std::optional<int64_t> checkpoint_number(const std::string& filename, const std::string& name) {
  if (filename.size() <= name.size() + 1 || filename.compare(0, name.size(), name) != 0 ||
      filename[name.size()] != '-')
    return std::nullopt;
  std::string digits = filename.substr(name.size() + 1);
  if (digits.empty() || digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
    return std::nullopt;
  return std::stoll(digits);
}

}  // namespace

void fsync_directory(const std::string& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) raise(Code::Internal, "checkpoint: cannot open directory {}: {}", directory, errno_text());
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) raise(Code::Internal, "checkpoint: fsync of directory {} failed: {}", directory, errno_text());
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  fs::path target(path);
  std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  std::random_device rd;
  std::string tmp = path + ".tmp-" + std::to_string(rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) raise(Code::PermissionDenied, "checkpoint: cannot create {}: {}", tmp, errno_text());
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());
      raise(Code::ResourceExhausted, "checkpoint: writing {} failed: {}", tmp, why);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    raise(Code::Internal, "checkpoint: fsync of {} failed: {}", tmp, why);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    raise(Code::Internal, "checkpoint: rename {} -> {} failed: {}", tmp, path, why);
  }
  fsync_directory(dir);
}

CheckpointManager::CheckpointManager(std::string directory, ManagerOptions options, VerifyFn verify, ClockFn clock)
    : directory_(std::move(directory)), options_(std::move(options)), verify_(std::move(verify)),
      clock_(clock ? std::move(clock) : ClockFn(now_seconds)) {
  const char* fn = "cairn_checkpoint_manager_create";
  if (directory_.empty()) raise(Code::InvalidArgument, "{}: directory is empty", fn);
  if (options_.max_to_keep == 0)
    raise(Code::InvalidArgument, "{}: max_to_keep must be positive or negative (keep all), got 0", fn);
  if (options_.keep_checkpoint_every_n_hours < 0)
    raise(Code::InvalidArgument, "{}: keep_checkpoint_every_n_hours must be >= 0", fn);
  const std::string& name = options_.checkpoint_name;
  if (name.empty() || name.find('/') != std::string::npos || name == kStateFile)
    raise(Code::InvalidArgument, "{}: checkpoint_name \"{}\" is not a plain file name", fn, name);
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec) raise(Code::PermissionDenied, "{}: cannot create directory {}: {}", fn, directory_, ec.message());
  clean_temporaries();
  if (!load_state()) rebuild_from_directory();
  // TF's rule: the keep-every-n-hours clock starts at the recovered timestamp, else now.
  if (last_preserved_ <= 0) last_preserved_ = clock_();
  refresh_views();
}

std::string CheckpointManager::path_for(int64_t number) const {
  return (fs::path(directory_) / (options_.checkpoint_name + "-" + std::to_string(number))).string();
}

void CheckpointManager::clean_temporaries() const {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(directory_, ec)) {
    std::string f = e.path().filename().string();
    bool ours = f.rfind(options_.checkpoint_name + "-", 0) == 0 || f.rfind(kStateFile, 0) == 0;
    if (ours && f.find(".tmp-") != std::string::npos) fs::remove(e.path(), ec);
  }
}

// State file: a header line, "checkpoint <file> <timestamp>" lines oldest first,
// "preserved <timestamp>", then "checksum <xxh3 hex>" over everything before it.
bool CheckpointManager::load_state() {
  std::ifstream in(fs::path(directory_) / kStateFile);
  if (!in) return false;
  std::stringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  size_t pos = text.rfind("checksum ");
  if (pos == std::string::npos) return false;
  std::string body = text.substr(0, pos);
  std::ostringstream want;
  want << "checksum " << std::hex << checksum(body) << "\n";
  if (text.substr(pos) != want.str()) return false;
  std::istringstream lines(body);
  std::string line;
  if (!std::getline(lines, line) || line != kStateHeader) return false;
  std::vector<Entry> entries;
  double preserved = 0;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string kind, file;
    double ts = 0;
    words >> kind;
    if (kind == "checkpoint" && (words >> file >> ts) && checkpoint_number(file, options_.checkpoint_name)) {
      entries.push_back({(fs::path(directory_) / file).string(), ts});
    } else if (kind == "preserved" && (words >> ts)) {
      preserved = ts;
    } else {
      return false;
    }
  }
  // Entries whose file vanished (deleted by hand) are dropped rather than reported as checkpoints.
  entries_.clear();
  for (auto& e : entries)
    if (fs::exists(e.path)) entries_.push_back(std::move(e));
  last_preserved_ = preserved;
  return true;
}

void CheckpointManager::rebuild_from_directory() {
  std::vector<std::pair<int64_t, Entry>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(directory_, ec)) {
    if (!e.is_regular_file()) continue;
    auto n = checkpoint_number(e.path().filename().string(), options_.checkpoint_name);
    if (!n || !verify_(e.path().string())) continue;
    auto mtime = fs::last_write_time(e.path(), ec);
    double ts = std::chrono::duration<double>(mtime.time_since_epoch()).count();
    found.push_back({*n, Entry{e.path().string(), ts}});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  entries_.clear();
  for (auto& f : found) entries_.push_back(std::move(f.second));
  last_preserved_ = 0;
}

void CheckpointManager::write_state() const {
  std::ostringstream body;
  body << kStateHeader << "\n";
  body.precision(17);
  for (const Entry& e : entries_) body << "checkpoint " << fs::path(e.path).filename().string() << " " << e.timestamp << "\n";
  body << "preserved " << last_preserved_ << "\n";
  std::string text = body.str();
  std::ostringstream sum;
  sum << "checksum " << std::hex << checksum(text) << "\n";
  write_file_atomically((fs::path(directory_) / kStateFile).string(), text + sum.str());
}

// Applies max_to_keep: the oldest entries leave the list, except that keep_checkpoint_every_n_hours
// preserves one now and then (kept on disk, no longer managed). Returns the files to delete.
std::vector<std::string> CheckpointManager::sweep() {
  std::vector<std::string> doomed;
  if (options_.max_to_keep < 0) return doomed;
  const double interval = options_.keep_checkpoint_every_n_hours * 3600.0;
  while (static_cast<int64_t>(entries_.size()) > options_.max_to_keep) {
    Entry oldest = entries_.front();
    entries_.erase(entries_.begin());
    if (interval > 0 && oldest.timestamp - last_preserved_ >= interval) {
      last_preserved_ = oldest.timestamp;
      continue;
    }
    doomed.push_back(oldest.path);
  }
  return doomed;
}

std::string CheckpointManager::save(int64_t number, const WriteFn& write) {
  std::string path = path_for(number);
  std::vector<std::string> superseded = shard_paths(path);  // a sharded checkpoint this one replaces
  write(path);  // durable (fsynced and renamed) when it returns
  record_and_sweep(path);
  for (const std::string& s : superseded) {
    std::error_code ec;
    fs::remove(s, ec);
  }
  return path;
}

void CheckpointManager::record_and_sweep(const std::string& path) {
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.path == path; }),
                 entries_.end());
  entries_.push_back({path, clock_()});
  std::vector<std::string> doomed = sweep();
  // Old files go only after the state that no longer lists them is on disk, so a crash never
  // leaves the state naming a deleted checkpoint.
  write_state();
  refresh_views();
  for (const std::string& d : doomed) remove_checkpoint_files(d);
}

std::string CheckpointManager::save_sharded(int64_t number, ShardGroup& group, const WriteFn& write_shard) {
  const char* fn = "CheckpointManager::save_sharded";
  const int rank = group.rank(), count = group.size();
  if (count < 1 || rank < 0 || rank >= count)
    raise(Code::InvalidArgument, "{}: rank {} of a group of {}", fn, rank, count);
  const std::string path = path_for(number);
  const std::string index_name = fs::path(path).filename().string();

  // Every rank proposes a nonce and all take the largest: this save's shard names, common to the
  // ranks and new, so a retried save never writes over a committed checkpoint's shards. The
  // gather is also a full synchronization: no rank writes before every rank has arrived.
  std::random_device rd;
  const uint64_t proposal = (uint64_t{rd()} << 32) | rd();
  const std::vector<uint64_t> proposals = group.all_gather({proposal});
  const uint64_t nonce = *std::max_element(proposals.begin(), proposals.end());
  std::vector<std::string> shard_files;
  for (int r = 0; r < count; ++r) shard_files.push_back(shard_file_name(index_name, r, count, nonce));
  const std::string mine = (fs::path(directory_) / shard_files[rank]).string();
  auto abandon = [&] {
    std::error_code ec;
    fs::remove(mine, ec);
  };

  std::vector<uint64_t> report = {0, 0, 0};  // written, size, checksum
  std::exception_ptr write_error;
  try {
    write_shard(mine);  // durable when it returns
    ShardFile f = describe_shard(mine);
    report = {1, f.size, f.checksum};
  } catch (...) {
    write_error = std::current_exception();
  }
  const std::vector<uint64_t> reports = group.all_gather(report);
  for (int r = 0; r < count; ++r) {
    if (reports[3 * r] == 1) continue;
    abandon();
    if (write_error) std::rethrow_exception(write_error);
    raise(Code::Aborted, "{}: checkpoint {} was not committed: rank {} could not write its shard (its error says why)",
          fn, path, r);
  }

  // Rank 0 commits: the index (the commit point), the state, retention. The others wait for it.
  std::exception_ptr commit_error;
  uint64_t committed = 0;
  if (rank == 0) {
    try {
      commit_sharded(path, shard_files, reports);
    } catch (...) {
      commit_error = std::current_exception();
    }
    // A failure after the index's rename (the directory's fsync) still committed it.
    try {
      committed = is_shard_index(path) && read_shard_index(path).shards.front().file == shard_files.front();
    } catch (...) {
    }
    if (committed && !commit_error) {
      try {
        record_and_sweep(path);
        for (const std::string& orphan : orphan_shards()) {
          std::error_code ec;
          fs::remove(orphan, ec);
        }
      } catch (...) {
        commit_error = std::current_exception();
      }
    }
  }
  const std::vector<uint64_t> outcome = group.all_gather({committed});
  if (outcome[0] == 0) abandon();
  if (commit_error) std::rethrow_exception(commit_error);
  if (outcome[0] == 0)
    raise(Code::Aborted, "{}: checkpoint {} was not committed: rank 0 could not write the index (its error says why)",
          fn, path);
  if (rank != 0) {
    if (!load_state()) rebuild_from_directory();
    refresh_views();
  }
  return path;
}

void CheckpointManager::commit_sharded(const std::string& path, const std::vector<std::string>& shard_files,
                                       const std::vector<uint64_t>& reports) {
  ShardIndex index;
  for (size_t r = 0; r < shard_files.size(); ++r) {
    const std::string shard_path = (fs::path(directory_) / shard_files[r]).string();
    ShardFile seen = describe_shard(shard_path);
    if (!(seen == ShardFile{shard_files[r], reports[3 * r + 1], reports[3 * r + 2]}))
      raise(Code::FailedPrecondition,
            "CheckpointManager::save_sharded: rank 0 sees shard {} ({}) other than rank {} wrote it: is {} one "
            "directory shared by every rank?",
            r, shard_files[r], r, directory_);
    index.shards.push_back(std::move(seen));
    const Reader shard = Reader::open(shard_path);
    for (const TensorInfo& e : shard.entries())
      if (e.key != kObjectGraphKey) index.keys.emplace_back(e.key, static_cast<uint32_t>(r));
  }
  std::sort(index.keys.begin(), index.keys.end());
  for (size_t i = 1; i < index.keys.size(); ++i)
    if (index.keys[i].first == index.keys[i - 1].first)
      raise(Code::InvalidArgument,
            "CheckpointManager::save_sharded: '{}' is in shards {} and {}: the ranks saved different values (every "
            "rank must hold the same variables)",
            index.keys[i].first, index.keys[i - 1].second, index.keys[i].second);
  write_file_atomically(path, encode_shard_index(index));
}

std::vector<std::string> CheckpointManager::orphan_shards() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(directory_, ec)) {
    const std::string f = e.path().filename().string();
    if (!is_shard_file_name(f, options_.checkpoint_name) || f.find(".tmp-") != std::string::npos) continue;
    // The index a shard belongs to is its name up to ".shard-"; a shard it does not name is left over.
    const std::string index_path = (fs::path(directory_) / f.substr(0, f.find(".shard-"))).string();
    std::vector<std::string> named = shard_paths(index_path);
    bool listed = std::any_of(named.begin(), named.end(), [&](const std::string& n) { return fs::path(n).filename() == f; });
    if (!listed) out.push_back(e.path().string());
  }
  return out;
}

void remove_checkpoint_files(const std::string& path) {
  std::vector<std::string> shards = shard_paths(path);
  std::error_code ec;
  fs::remove(path, ec);  // the index first: a crash in between leaves orphans, never a broken index
  for (const std::string& s : shards) fs::remove(s, ec);
}

std::vector<std::string> shard_paths(const std::string& path) {
  std::vector<std::string> out;
  if (!is_shard_index(path)) return out;
  try {
    for (const ShardFile& s : read_shard_index(path).shards) out.push_back((fs::path(path).parent_path() / s.file).string());
  } catch (const std::exception&) {
    // A damaged index names nothing; its shards are left for the orphan sweep.
  }
  return out;
}

void CheckpointManager::refresh_views() {
  paths_.clear();
  for (const Entry& e : entries_) paths_.push_back(e.path);
  latest_ = paths_.empty() ? std::nullopt : std::optional<std::string>(paths_.back());
}

}  // namespace cairn::ckpt
