#include "runtime/checkpoint/collective_group.h"

namespace cairn::ckpt {

CollectiveShardGroup::CollectiveShardGroup(Ref<distribute::Collective> collective, int rank)
    : collective_(std::move(collective)), rank_(rank) {
  if (!collective_) raise(Code::InvalidArgument, "CollectiveShardGroup: no collective");
  if (rank < 0 || rank >= collective_->size())
    raise(Code::InvalidArgument, "CollectiveShardGroup: rank {} is outside a group of {}", rank, collective_->size());
}

std::vector<uint64_t> CollectiveShardGroup::all_gather(const std::vector<uint64_t>& mine) {
  std::vector<uint64_t> all(mine.size() * static_cast<size_t>(size()));
  // Int64 carries the bits: an all-gather copies bytes.
  collective_->all_gather(rank_, DType::Int64, static_cast<int64_t>(mine.size()), mine.data(), all.data());
  return all;
}

}  // namespace cairn::ckpt
