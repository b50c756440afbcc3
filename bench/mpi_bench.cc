// Allreduce bus bandwidth, 2*(n-1)/n * bytes / time (NCCL's "busbw"), through Cairn's
// MpiCollective against MPI_Allreduce called directly on the same float32 buffers, in the same
// run, from 1 KB to 64 MB. Run under mpirun by bench/mpi_bench.sh; rank 0 prints one line per size
// with both figures and their ratio. The program initializes MPI itself and hands Cairn its
// communicator (the adopt path), so both sides run on the same MPI.
//
//   mpirun -np N mpi_bench [rounds]     (3 by default; the best round of each side is reported)
#include <mpi/mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/distribute/mpi_collective.h"
#include "runtime/eager/context.h"

namespace {

using cairn::DType;
using cairn::distribute::MpiCollective;
using cairn::distribute::Reduction;

// Seconds per call of `call` over `iters` calls, timed between barriers (the slowest rank's view).
template <class Fn>
double seconds_per_call(int iters, Fn call) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) call();
  MPI_Barrier(MPI_COMM_WORLD);
  double local = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters, slowest = 0;
  MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  {
    cairn::Ref<cairn::Context> ctx = cairn::make_ref<cairn::Context>(cairn::ContextOptions{});
    cairn::distribute::MpiOptions options;
    options.timeout = std::chrono::milliseconds(60000);
    cairn::Ref<MpiCollective> cairn_mpi =
        MpiCollective::adopt(reinterpret_cast<uintptr_t>(MPI_COMM_WORLD), {&ctx->cpu()}, options);
    if (rank == 0) {
      std::printf("# allreduce float32 sum, %d ranks, bus bandwidth GB/s (best of %d rounds)\n", size, rounds);
      std::printf("%10s %12s %12s %8s\n", "bytes", "MPI", "Cairn", "ratio");
    }
    const double bus = 2.0 * (size - 1) / size;
    for (size_t bytes = 1024; bytes <= (64u << 20); bytes *= 4) {
      const size_t count = bytes / sizeof(float);
      std::vector<float> in(count, 1.0f + static_cast<float>(rank)), out(count);
      // About 0.1 s of traffic per round at 1 GB/s, at least 5 calls.
      const int iters = static_cast<int>(std::clamp<size_t>((100u << 20) / bytes, 5, 2000));
      auto direct = [&] {
        MPI_Allreduce(in.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      };
      auto through_cairn = [&] {
        cairn_mpi->all_reduce(rank, DType::Float32, static_cast<int64_t>(count), in.data(), out.data(), Reduction::Sum);
      };
      direct();  // warm both paths (connections, buffers)
      through_cairn();
      double best_direct = 1e30, best_cairn = 1e30;
      for (int r = 0; r < rounds; ++r) {  // interleaved, so load changes hit both sides alike
        best_direct = std::min(best_direct, seconds_per_call(iters, direct));
        best_cairn = std::min(best_cairn, seconds_per_call(iters, through_cairn));
      }
      if (rank == 0) {
        const double mpi_bw = bus * bytes / best_direct / 1e9, cairn_bw = bus * bytes / best_cairn / 1e9;
        std::printf("%10zu %12.3f %12.3f %7.2fx\n", bytes, mpi_bw, cairn_bw, cairn_bw / mpi_bw);
      }
    }
  }
  MPI_Finalize();
  return 0;
}
