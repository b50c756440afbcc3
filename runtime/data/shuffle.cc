// shuffle.
//
// Indexable, finite input: element i of iteration `epoch` is input element P(i), where P is a
// bijection of [0, n) computed per index, never stored: a balanced Feistel network of 8 rounds
// over the smallest even number of bits 2b with 4^b >= n (each round's function is Philox4x32-10
// of (the right half, the round) under the shuffle's key), with cycle walking (re-encrypt until the
// value falls below n; fewer than 4 steps on average since 4^b < 4n). Pure and thread-safe, so the
// IndexIterator computes shuffled elements in parallel and the state stays one index. The whole
// input is permuted: buffer_size only has to be valid.
//
// Streams (and infinite indexable inputs): TensorFlow's buffer. The buffer is filled up to
// buffer_size elements; each next() returns a uniformly drawn buffer element and the slot is
// refilled from the input on the next call. Draw k uses Philox counter k under the key. The state
// is the input's state, the draw counter and the buffered elements (saved explicitly).
//
// Key: mix64(seed), and with reshuffle_each_iteration mixed with the epoch, so each iteration
// (each pass of an enclosing repeat) has its own order; without it all share one.
#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/core/philox.h"
#include "runtime/data/transforms.h"
#include "runtime/data/transforms_internal.h"

namespace cairn::data {
namespace {

using xform::UnaryDataset;

// A pseudo-random bijection of [0, n) (n >= 1) under a 64-bit key.
class IndexPermutation {
 public:
  IndexPermutation(uint64_t n, uint64_t key) : n_(n), key_(philox::key_from(key)) {
    int bits = 2;
    while (bits < 64 && (uint64_t{1} << bits) < n) bits += 2;
    half_ = bits / 2;
    mask_ = half_ == 32 ? 0xffffffffu : (uint32_t{1} << half_) - 1;
  }

  uint64_t operator()(uint64_t i) const {
    do i = encrypt(i);
    while (i >= n_);
    return i;
  }

 private:
  static constexpr uint32_t kRounds = 8;

  uint64_t encrypt(uint64_t x) const {
    uint32_t left = static_cast<uint32_t>(x >> half_) & mask_;
    uint32_t right = static_cast<uint32_t>(x) & mask_;
    for (uint32_t round = 0; round < kRounds; ++round) {
      const uint32_t f = philox::philox4x32_10(philox::Counter{right, round, 0x5348u, 0u}, key_)[0] & mask_;
      const uint32_t next = left ^ f;
      left = right;
      right = next;
    }
    return (static_cast<uint64_t>(left) << half_) | right;
  }

  uint64_t n_;
  philox::Key key_;
  int half_ = 1;
  uint32_t mask_ = 1;
};

class ShuffleDataset final : public UnaryDataset {
 public:
  ShuffleDataset(DatasetPtr in, int64_t buffer_size, int64_t seed, bool reshuffle)
      : UnaryDataset(in, in->spec()), buffer_size_(buffer_size), seed_(seed), reshuffle_(reshuffle) {}

  std::string describe() const override {
    return fmt::format("{}.shuffle({}, seed={}{})", in_->describe(), buffer_size_, seed_,
                       reshuffle_ ? "" : ", reshuffle_each_iteration=false");
  }
  int64_t cardinality() const override { return in_->cardinality(); }
  bool random_access() const override { return input_indexable() && in_->cardinality() >= 0; }

  uint64_t key(uint64_t epoch) const {
    const uint64_t k = philox::mix64(static_cast<uint64_t>(seed_));
    return reshuffle_ ? philox::mix64(k ^ philox::mix64(epoch + 1)) : k;
  }

  void get(int64_t index, uint64_t epoch, Element& out) const override {
    const IndexPermutation perm(static_cast<uint64_t>(in_->cardinality()), key(epoch));
    in_->get(static_cast<int64_t>(perm(static_cast<uint64_t>(index))), epoch, out);
  }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override;

  int64_t buffer_size() const { return buffer_size_; }

 private:
  const int64_t buffer_size_;
  const int64_t seed_;
  const bool reshuffle_;
};

class ShuffleIterator final : public xform::InputIterator<ShuffleDataset> {
 public:
  ShuffleIterator(std::shared_ptr<const ShuffleDataset> ds, uint64_t epoch)
      : InputIterator(std::move(ds), epoch), key_(philox::key_from(ds_->key(epoch))) {}

  bool next(Element& out) override {
    Context& ctx = ds_->context();
    while (static_cast<int64_t>(buffer_.size()) < ds_->buffer_size()) {
      Element e;
      if (!input_.next(e)) break;  // a failed element propagates; what is buffered stays
      for (Tensor& t : e) t = host_values(t, ctx.cpu(), "shuffle");
      buffer_.push_back(std::move(e));
    }
    if (buffer_.empty()) return false;
    const philox::Counter w = philox::philox4x32_10(philox::counter_for(draws_++), key_);
    const uint64_t x = (static_cast<uint64_t>(w[1]) << 32) | w[0];
    const auto j = static_cast<size_t>((static_cast<unsigned __int128>(x) * buffer_.size()) >> 64);
    out = std::move(buffer_[j]);
    if (j + 1 != buffer_.size()) buffer_[j] = std::move(buffer_.back());
    buffer_.pop_back();
    return true;
  }

  void save(StateWriter& w) override {
    InputIterator::save(w);
    w.put_u64(draws_);
    w.put_u64(buffer_.size());
    for (const Element& e : buffer_) w.put_element(e);
  }

  void restore(StateReader& r) override {
    InputIterator::restore(r);
    draws_ = r.get_u64();
    const uint64_t n = r.get_u64();
    if (n > static_cast<uint64_t>(ds_->buffer_size())) r.corrupt("a shuffle buffer larger than buffer_size");
    std::vector<Element> buffer;
    buffer.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      buffer.push_back(r.get_element());
      if (buffer.back().size() != ds_->spec().size()) r.corrupt("a shuffle buffer element with the wrong components");
    }
    buffer_ = std::move(buffer);
  }


 private:
  const philox::Key key_;
  uint64_t draws_ = 0;
  std::vector<Element> buffer_;  // host tensors
};

std::unique_ptr<Iterator> ShuffleDataset::make_iterator(uint64_t epoch) const {
  return xform::iterator_for<ShuffleIterator>(*this, epoch);
}

}  // namespace

DatasetPtr shuffle(DatasetPtr in, int64_t buffer_size, int64_t seed, bool reshuffle_each_iteration) {
  xform::require_input(in, "shuffle");
  if (buffer_size < 1) raise(Code::InvalidArgument, "shuffle: buffer_size is {}, expected >= 1", buffer_size);
  return std::make_shared<ShuffleDataset>(std::move(in), buffer_size, seed, reshuffle_each_iteration);
}

}  // namespace cairn::data
