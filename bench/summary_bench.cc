// tf.summary costs, each against its peer in the same run:
//  1. a scalar call on the calling thread (target < 1 us): queued for the background writer,
//     against the same event serialized and written synchronously on the calling thread (a
//     buffered TFRecord write, no flush), and the C API call through the default writer;
//     "paced" calls one per simulated 20 us training step (what a training loop does), "flood"
//     back to back (bounded by the writer thread's throughput once the queue is full);
//  2. PNG image summaries per second (28x28x1 and 256x256x3 uint8), encoding on the calling
//     thread, against the raw pixel bytes written synchronously.
//
//   bazel run -c opt //bench:summary_bench -- [DIR]     (DIR defaults to /tmp/cairn-summary-bench)
//
// Prints figures; it is not a test.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cairn/cairn.h"
#include "runtime/eager/context.h"
#include "runtime/io/record.h"
#include "runtime/summary/values.h"
#include "runtime/summary/writer.h"

using namespace cairn;
using Clock = std::chrono::steady_clock;

namespace {

double ns_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::nano>(b - a).count(); }

void spin_for_ns(double ns) {
  const auto until = Clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(ns));
  while (Clock::now() < until) {
  }
}

struct Timing {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

Timing stats(std::vector<double> v) {
  Timing t;
  for (double x : v) t.mean += x;
  t.mean /= static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  t.p50 = v[v.size() / 2];
  t.p90 = v[v.size() * 9 / 10];
  t.p99 = v[v.size() * 99 / 100];
  return t;
}

// Times each call of `call(i)` alone, with `gap_ns` of other work between calls, after n / 10
// untimed calls (first allocations, the writer thread's start).
template <class F>
Timing paced(int n, double gap_ns, F call) {
  for (int i = 0; i < n / 10; ++i) {
    call(i);
    spin_for_ns(gap_ns);
  }
  std::vector<double> each;
  each.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    call(i);
    each.push_back(ns_between(t0, Clock::now()));
    spin_for_ns(gap_ns);
  }
  return stats(std::move(each));
}

// Mean ns per call of `n` calls back to back.
template <class F>
double flood(int n, F call) {
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) call(i);
  return ns_between(t0, Clock::now()) / n;
}

void check(cairn_status* st) {
  if (!st) return;
  std::fprintf(stderr, "error: %s\n", cairn_status_message(st));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp/cairn-summary-bench";
  std::filesystem::remove_all(dir);
  std::printf("summary_bench: event files under %s\n\n", dir.c_str());

  // ---- 1. scalar calls ----
  constexpr int kPaced = 20000, kFlood = 200000;
  constexpr double kGapNs = 20000;
  // The C API through the default writer (w = NULL) and the default step.
  cairn_summary_writer* cw = nullptr;
  check(cairn_summary_writer_create((dir + "/capi").c_str(), nullptr, &cw));
  cairn_summary_writer_set_default(cw);
  Timing capi_paced = paced(kPaced, kGapNs, [&](int i) {
    cairn_summary_set_step(i);
    check(cairn_summary_scalar(nullptr, "loss", 0.5, CAIRN_SUMMARY_DEFAULT_STEP));
  });
  cairn_summary_writer_set_default(nullptr);
  check(cairn_summary_writer_close(cw));
  cairn_summary_writer_free(cw);

  auto w = summary::SummaryWriter::create(dir + "/async");
  Timing async_paced = paced(kPaced, kGapNs, [&](int i) { w->scalar("loss", 0.5f, i); });
  double async_flood = flood(kFlood, [&](int i) { w->scalar("loss", 0.5f, i); });
  w->close();

  // The peer: the same event serialized and framed on the calling thread (buffered, no flush).
  std::filesystem::create_directories(dir + "/sync");
  auto file = io::RecordWriter::open(dir + "/sync/events.out.tfevents.sync");
  auto sync_call = [&](int i) {
    double wall = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::string rec = summary::encode_summary_event(wall, i, summary::scalar_value("loss", 0.5f), i == 0);
    file->write(rec.data(), rec.size());
  };
  Timing sync_paced = paced(kPaced, kGapNs, sync_call);
  double sync_flood = flood(kFlood, sync_call);
  file->close();

  std::printf("1. scalar call on the calling thread (ns per call)\n");
  std::printf("   %-48s %8s %8s %8s %8s\n", "", "mean", "p50", "p90", "p99");
  std::printf("   %-48s %8.0f %8.0f %8.0f %8.0f\n", "queued (SummaryWriter::scalar), paced 20 us", async_paced.mean, async_paced.p50, async_paced.p90, async_paced.p99);
  std::printf("   %-48s %8.0f %8.0f %8.0f %8.0f\n", "C API cairn_summary_scalar(NULL=default), paced", capi_paced.mean, capi_paced.p50, capi_paced.p90, capi_paced.p99);
  std::printf("   %-48s %8.0f %8.0f %8.0f %8.0f\n", "synchronous encode + TFRecord write, paced", sync_paced.mean, sync_paced.p50, sync_paced.p90, sync_paced.p99);
  std::printf("   queued / synchronous (paced mean): %.2fx\n", async_paced.mean / sync_paced.mean);
  std::printf("   flood (back to back, %d calls): queued %.0f ns, synchronous %.0f ns (%.2fx)\n\n", kFlood, async_flood,
              sync_flood, async_flood / sync_flood);

  // ---- 2. PNG image summaries ----
  ContextOptions copts;
  Ref<Context> ctx = make_ref<Context>(copts);
  std::printf("2. image summaries (uint8, one image per call, PNG by libpng at compression level 1)\n");
  struct Case {
    int64_t h, w, c;
    int n;
  };
  for (Case cs : {Case{28, 28, 1, 5000}, Case{256, 256, 3, 300}}) {
    Tensor img = Tensor::allocate(ctx->cpu(), DType::UInt8, Shape{1, cs.h, cs.w, cs.c});
    uint8_t* p = img.mutable_data<uint8_t>();
    // A smooth gradient with a little noise, like a natural image.
    uint32_t x = 2463534242u;
    for (int64_t i = 0; i < img.num_elements(); ++i) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      p[i] = static_cast<uint8_t>((i / cs.c) % cs.w * 255 / cs.w + (x & 7));
    }
    auto iw = summary::SummaryWriter::create(dir + "/images");
    auto t0 = Clock::now();
    for (int i = 0; i < cs.n; ++i) iw->write(summary::image_value("img", img, 1), i);
    iw->flush();
    const double secs = ns_between(t0, Clock::now()) / 1e9;
    iw->close();
    auto raw = io::RecordWriter::open(dir + "/images/raw");
    auto r0 = Clock::now();
    for (int i = 0; i < cs.n; ++i) raw->write(img.raw_data(), img.nbytes());
    raw->flush();
    const double raw_secs = ns_between(r0, Clock::now()) / 1e9;
    raw->close();
    const std::string png = summary::encode_png(p, cs.h, cs.w, static_cast<int>(cs.c));
    std::printf("   %3lldx%3lldx%lld: %8.0f images/s (%.1f us each, PNG %zu bytes of %lld raw); raw pixels written "
                "synchronously: %.0f/s (%.1fx faster)\n",
                static_cast<long long>(cs.h), static_cast<long long>(cs.w), static_cast<long long>(cs.c), cs.n / secs,
                secs / cs.n * 1e6, png.size(), static_cast<long long>(img.nbytes()), cs.n / raw_secs, secs / raw_secs);
  }
  return 0;
}
