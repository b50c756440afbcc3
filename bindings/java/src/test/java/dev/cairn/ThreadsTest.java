package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ThreadsTest {
  @Test
  void oneContextServesSeveralThreads() throws Exception {
    int threads = 8;
    int iterations = 2000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (CairnContext ctx = new CairnContext(CairnContext.options().numThreads(2));
        Tensor shared = Tensor.of(ctx, new float[] {1, 2, 3, 4}, 4)) {
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < threads; ++t) {
        final float k = t;
        results.add(
            pool.submit(
                () -> {
                  int done = 0;
                  try (Tensor mine = Tensor.of(ctx, new float[] {k, k, k, k}, 4);
                      Tensor row = Tensor.of(ctx, new float[] {1, 1}, 1, 2);
                      Tensor column = Tensor.of(ctx, new float[] {k, 1}, 2, 1)) {
                    for (int i = 0; i < iterations; ++i) {
                      try (Tensor sum = Ops.add(ctx, shared, mine);
                          Tensor product = Ops.matMul(ctx, row, column)) {
                        assertArrayEquals(new float[] {1 + k, 2 + k, 3 + k, 4 + k}, sum.toFloatArray());
                        assertArrayEquals(new float[] {k + 1}, product.toFloatArray());
                        ++done;
                      }
                    }
                  }
                  return done;
                }));
      }
      for (Future<Integer> f : results) assertEquals(iterations, f.get(60, TimeUnit.SECONDS));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void tensorsAreReadableFromSeveralThreads() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try (CairnContext ctx = new CairnContext();
        Tensor t = Tensor.of(ctx, new long[] {5, 6, 7}, 3)) {
      List<Future<long[]>> reads = new ArrayList<>();
      for (int i = 0; i < 16; ++i) reads.add(pool.submit(t::toLongArray));
      for (Future<long[]> f : reads) assertArrayEquals(new long[] {5, 6, 7}, f.get(10, TimeUnit.SECONDS));
    } finally {
      pool.shutdownNow();
    }
  }
}
