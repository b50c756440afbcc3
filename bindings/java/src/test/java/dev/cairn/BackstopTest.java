package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The backstop of close() (Backstop): per-thread chunks of Refs, compaction, threads that end,
 * closing on another thread and from several threads at once; exact live handle counts.
 */
class BackstopTest {
  private static final float[] DATA = new float[16];

  @Test
  @Timeout(30)
  void manyLiveTensorsSurviveCompactionAndCloseInAnyOrder() throws Exception {
    try (CairnContext ctx = new CairnContext()) {
      long baseline = OpsTest.settledLiveHandles();
      List<Tensor> kept = new ArrayList<>();
      // More than a chunk holds, with closed ones in between: the chunk compacts and grows.
      for (int i = 0; i < 3000; ++i) {
        Tensor t = Tensor.of(ctx, DATA, 16);
        if (i % 3 == 0) t.close();
        else kept.add(t);
      }
      assertEquals(baseline + 2000, NativeHandle.liveHandles());
      System.gc(); // the kept tensors are reachable: nothing may be freed
      Thread.sleep(50);
      assertEquals(baseline + 2000, NativeHandle.liveHandles());
      for (Tensor t : kept) assertArrayEquals(DATA, t.toFloatArray());
      // Close every other one, then make more so the chunk compacts and shrinks.
      for (int i = 0; i < kept.size(); i += 2) kept.get(i).close();
      for (int i = 0; i < 3000; ++i) Tensor.of(ctx, DATA, 16).close();
      assertEquals(baseline + 1000, NativeHandle.liveHandles());
      for (int i = 1; i < kept.size(); i += 2) assertArrayEquals(DATA, kept.get(i).toFloatArray());
      for (Tensor t : kept) t.close(); // again for half of them: harmless
      assertEquals(baseline, NativeHandle.liveHandles());
    }
  }

  @Test
  @Timeout(30)
  void tensorsForgottenByAThreadThatEndedAreFreed() throws Exception {
    try (CairnContext ctx = new CairnContext()) {
      long baseline = OpsTest.settledLiveHandles();
      Thread t = new Thread(() -> {
        for (int i = 0; i < 1000; ++i) Tensor.of(ctx, DATA, 16); // forgotten
      });
      t.start();
      t.join();
      assertTrue(LeakTest.drainCleaner(baseline), "handles still live: " + (NativeHandle.liveHandles() - baseline));
      // A new thread's chunk sweeps the ended thread's chunk; everything still counts exactly.
      Thread u = new Thread(() -> Tensor.of(ctx, DATA, 16).close());
      u.start();
      u.join();
      assertEquals(baseline, NativeHandle.liveHandles());
    }
  }

  @Test
  @Timeout(30)
  void tensorsMadeOnOneThreadAreClosedOnAnotherOrByManyAtOnce() throws Exception {
    try (CairnContext ctx = new CairnContext()) {
      long baseline = OpsTest.settledLiveHandles();
      List<Tensor> made = new ArrayList<>();
      Thread maker = new Thread(() -> {
        for (int i = 0; i < 2000; ++i) made.add(Tensor.of(ctx, DATA, 16));
      });
      maker.start();
      maker.join();
      assertEquals(baseline + 2000, NativeHandle.liveHandles());
      int threads = 4;
      CountDownLatch start = new CountDownLatch(1);
      AtomicInteger failures = new AtomicInteger();
      List<Thread> closers = new ArrayList<>();
      for (int k = 0; k < threads; ++k) {
        Thread c = new Thread(() -> {
          try {
            start.await();
            for (Tensor t : made) t.close(); // every thread closes every tensor
          } catch (Throwable e) {
            failures.incrementAndGet();
          }
        });
        c.start();
        closers.add(c);
      }
      start.countDown();
      for (Thread c : closers) c.join();
      assertEquals(0, failures.get());
      assertEquals(baseline, NativeHandle.liveHandles());
      System.gc();
      Thread.sleep(50); // closed tensors the GC finds are not freed again
      assertEquals(baseline, NativeHandle.liveHandles());
    }
  }
}
