// cache: in memory or in a file.
//
// Memory over an indexable input stays indexable: element i is computed once (from the input's
// iteration 0) and memoized, so every iteration gets the first one's elements, as TensorFlow's
// cache after random ops does. Over a stream, an iterator that runs a complete pass of its input
// publishes what it saw; later iterators read that.
//
// File: an iterator that finds no file `filename` runs its input and writes each element to
// `filename.tmp.<n>` (TFRecord framing, one element per record after a header record naming the
// spec), renaming it to `filename` when the pass completes. Iterators that find the file read it.
//
// State: reading: the position (and the epoch the cache was filled from, to rebuild it from the
// input when the cache is gone, e.g. a memory cache in a new process); filling: the input's state
// and the count (a restored filling pass does not publish: it has not seen the first elements).
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>
#include <unistd.h>

#include "runtime/core/error.h"
#include "runtime/data/parallel.h"
#include "runtime/data/parallel_internal.h"
#include "runtime/io/record.h"
#include "runtime/io/record_reader.h"

namespace cairn::data {
namespace {

constexpr std::string_view kFileMagic = "cairn.data.cache 1\n";

class CacheDataset final : public Dataset {
 public:
  CacheDataset(DatasetPtr in, std::string filename)
      : Dataset(in->context(), in->spec()), in_(std::move(in)), filename_(std::move(filename)) {}

  std::string describe() const override {
    return in_->describe() + (filename_.empty() ? ".cache()" : fmt::format(".cache('{}')", filename_));
  }
  int64_t cardinality() const override { return in_->cardinality(); }
  bool random_access() const override { return filename_.empty() && in_->random_access(); }
  int parallelism() const override { return in_->parallelism(); }
  int64_t prefetch_depth() const override { return in_->prefetch_depth(); }

  void get(int64_t index, uint64_t, Element& out) const override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = memo_.find(index);
      if (it != memo_.end()) {
        out = *it->second;
        return;
      }
    }
    auto e = std::make_shared<Element>();
    in_->get(index, 0, *e);  // two threads may compute it at once: the same pure value
    std::lock_guard<std::mutex> lock(mu_);
    memo_.emplace(index, e);
    out = *e;
  }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override;

  // The complete pass, when one has been published (memory).
  std::shared_ptr<const std::vector<Element>> complete() const {
    std::lock_guard<std::mutex> lock(mu_);
    return complete_;
  }
  void publish(std::shared_ptr<const std::vector<Element>> all, uint64_t epoch) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!complete_) {
      complete_ = std::move(all);
      complete_epoch_ = epoch;
    }
  }
  uint64_t complete_epoch() const {
    std::lock_guard<std::mutex> lock(mu_);
    return complete_epoch_;
  }

  const DatasetPtr& input() const { return in_; }
  const std::string& filename() const { return filename_; }
  std::string who() const { return filename_.empty() ? "cache" : fmt::format("cache '{}'", filename_); }

 private:
  const DatasetPtr in_;
  const std::string filename_;
  mutable std::mutex mu_;
  mutable std::unordered_map<int64_t, std::shared_ptr<const Element>> memo_;  // indexable memory cache
  mutable std::shared_ptr<const std::vector<Element>> complete_;              // stream memory cache
  mutable uint64_t complete_epoch_ = 0;
};

std::string header_record(const ElementSpec& spec) { return std::string(kFileMagic) + spec.text(); }

class CacheIterator final : public Iterator {
 public:
  CacheIterator(std::shared_ptr<const CacheDataset> ds, uint64_t epoch) : ds_(std::move(ds)), epoch_(epoch) {
    if (!open_cache(0)) start_filling(epoch_);
  }
  ~CacheIterator() override { cancel(); }

  bool next(Element& out) override {
    if (reading_) {
      if (data_) {
        if (pos_ >= static_cast<int64_t>(data_->size())) return false;
        out = (*data_)[static_cast<size_t>(pos_++)];
        return true;
      }
      std::string_view record;
      if (!reader_->next(&record)) return false;
      ++pos_;
      StateReader r(record, ds_->who(), ds_->context());
      out = r.get_element();
      return true;
    }
    if (!input_->next(out)) {
      finish();
      return false;
    }
    ++pos_;
    if (!publish_) return true;
    if (writer_) {
      StateWriter w;
      w.put_element(out);
      try {
        writer_->write(w.bytes().data(), w.bytes().size());
      } catch (...) {
        abandon();  // the file will not be complete; the elements still flow
        throw;
      }
    } else {
      filled_.push_back(out);
    }
    return true;
  }

  void save(StateWriter& w) override {
    w.put_bool(reading_);
    w.put_u64(reading_ ? fill_epoch_ : epoch_);
    w.put_i64(pos_);
    if (!reading_) input_->save(w);
  }

  void restore(StateReader& r) override {
    const bool reading = r.get_bool();
    const uint64_t epoch = r.get_u64();
    const int64_t pos = r.get_i64();
    if (pos < 0) r.corrupt("a negative position");
    abandon();
    if (input_) input_->cancel();
    input_.reset();
    if (reading) {
      if (open_cache(pos)) return;
      // The cache is gone (a memory cache in a new process, a deleted file): run the input of the
      // iteration that filled it up to the position, filling the cache again on the way.
      start_filling(epoch);
      Element skipped;
      while (pos_ < pos && next(skipped)) {
      }
      return;
    }
    start_filling(epoch);
    input_->restore(r);
    pos_ = pos;
    abandon();  // it has not seen the elements before `pos`: it must not publish
  }

  void cancel() override {
    if (input_) input_->cancel();
    abandon();
  }

 private:
  // Switches to reading a complete cache at `pos`; false when there is none.
  bool open_cache(int64_t pos) {
    const std::string& file = ds_->filename();
    if (file.empty()) {
      data_ = ds_->complete();
      if (!data_) return false;
      fill_epoch_ = ds_->complete_epoch();
      if (pos > static_cast<int64_t>(data_->size())) raise(Code::InvalidArgument, "cache: position {} past the {} cached elements", pos, data_->size());
    } else {
      std::error_code ec;
      if (!std::filesystem::exists(file, ec)) return false;
      reader_ = io::RecordReader::open(file);
      std::string_view header;
      if (!reader_->next(&header) || header.substr(0, kFileMagic.size()) != kFileMagic)
        raise(Code::DataLoss, "{}: not a cache file of Cairn's", ds_->who());
      if (header != header_record(ds_->spec()))
        raise(Code::InvalidArgument, "{}: the file caches elements {{{}}}, this pipeline's are {{{}}}", ds_->who(),
              header.substr(kFileMagic.size()), ds_->spec().text());
      std::string_view record;
      for (int64_t k = 0; k < pos; ++k)
        if (!reader_->next(&record)) raise(Code::InvalidArgument, "{}: position {} past the cached elements", ds_->who(), pos);
    }
    reading_ = true;
    pos_ = pos;
    return true;
  }

  void start_filling(uint64_t epoch) {
    reading_ = false;
    data_.reset();
    reader_.reset();
    epoch_ = epoch;
    pos_ = 0;
    publish_ = true;
    filled_.clear();
    input_ = ds_->input()->make_iterator(epoch);
    if (!ds_->filename().empty()) {
      static std::atomic<uint64_t> counter{0};
      tmp_ = fmt::format("{}.tmp.{}.{}", ds_->filename(), ::getpid(), counter.fetch_add(1));
      writer_ = io::RecordWriter::open(tmp_);
      const std::string header = header_record(ds_->spec());
      writer_->write(header.data(), header.size());
    }
  }

  // The input ended after a complete pass: publish it.
  void finish() {
    if (!publish_) return;
    publish_ = false;
    if (writer_) {
      writer_->close();
      writer_.reset();
      std::error_code ec;
      std::filesystem::rename(tmp_, ds_->filename(), ec);
      if (ec) {
        std::remove(tmp_.c_str());
        raise(Code::Unavailable, "{}: cannot rename {} into place: {}", ds_->who(), tmp_, ec.message());
      }
      tmp_.clear();
    } else {
      ds_->publish(std::make_shared<const std::vector<Element>>(std::move(filled_)), epoch_);
    }
  }

  // Gives up publishing this pass (its temporary file is removed).
  void abandon() {
    publish_ = false;
    filled_.clear();
    if (writer_) {
      try {
        writer_->close();
      } catch (...) {
      }
      writer_.reset();
    }
    if (!tmp_.empty()) std::remove(tmp_.c_str());
    tmp_.clear();
  }

  const std::shared_ptr<const CacheDataset> ds_;
  uint64_t epoch_;
  bool reading_ = false;
  int64_t pos_ = 0;  // elements delivered
  // reading
  std::shared_ptr<const std::vector<Element>> data_;
  std::unique_ptr<io::RecordReader> reader_;
  uint64_t fill_epoch_ = 0;
  // filling
  std::unique_ptr<Iterator> input_;
  bool publish_ = false;
  std::vector<Element> filled_;
  std::unique_ptr<io::RecordWriter> writer_;
  std::string tmp_;
};

std::unique_ptr<Iterator> CacheDataset::make_iterator(uint64_t epoch) const {
  if (random_access()) return make_index_iterator(shared_from_this(), epoch);
  return std::make_unique<CacheIterator>(std::static_pointer_cast<const CacheDataset>(shared_from_this()), epoch);
}

}  // namespace

DatasetPtr cache(DatasetPtr in, std::string filename) {
  if (!in) raise(Code::InvalidArgument, "cache: the input dataset is null");
  return std::make_shared<CacheDataset>(std::move(in), std::move(filename));
}

}  // namespace cairn::data
