package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Mirrored replicas (MirroredStrategy): a run with an all-reduce on 2 logical CPU devices, reduce,
 * batches and iterators split over the replicas, failing and throwing steps (errors naming the
 * replica, no hang), fit of a model made in the strategy's scope against one device, bad input.
 */
class DistributeTest {
  /** A context seeded 1 whose CPU is split into {@code n} logical devices (through the raw layer). */
  private static CairnContext splitContext(int n) {
    CairnContext ctx = new CairnContext(CairnContext.options().seed(1));
    if (n > 1) CairnNative.contextSetLogicalDevices(ctx.handle(), NativeResources.cstr("cpu:0"), new long[n]);
    return ctx;
  }

  private static void closeAll(List<List<Tensor>> all) {
    for (List<Tensor> rs : all) rs.forEach(Tensor::close);
  }

  @Test
  void runAllReduceAndReduce() {
    try (CairnContext ctx = splitContext(2); MirroredStrategy s = MirroredStrategy.create(ctx)) {
      assertEquals(2, s.numReplicas());
      assertEquals(List.of("cpu:0", "cpu:1"), s.devices());
      List<List<Tensor>> out = s.run(r -> {
        Tensor mine = Tensor.scalar(r.context(), (float) (r.id() + 1));
        List<Tensor> sum = r.allReduce(Reduction.SUM, mine);
        return List.of(sum.get(0), mine);
      });
      try {
        assertEquals(2, out.size());
        for (int r = 0; r < 2; ++r) {
          assertArrayEquals(new float[] {3}, out.get(r).get(0).toFloatArray());
          assertEquals(s.devices().get(r), out.get(r).get(0).device());
        }
        try (Tensor mean = s.reduce(Reduction.MEAN, out.get(0).get(1), out.get(1).get(1))) {
          assertArrayEquals(new float[] {1.5f}, mean.toFloatArray());
        }
        CairnException e = assertThrows(CairnException.class, () -> s.reduce(Reduction.SUM, out.get(0).get(1)));
        assertEquals(Code.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("1 values for 2 replicas"), e.getMessage());
      } finally {
        closeAll(out);
      }
      List<List<Tensor>> seen = s.run(r -> List.of(Tensor.scalar(r.context(), r.id())));
      try {
        for (int r = 0; r < 2; ++r) {
          assertEquals(r, seen.get(r).get(0).toIntArray()[0]);
          assertEquals(s.devices().get(r), seen.get(r).get(0).device());
        }
      } finally {
        closeAll(seen);
      }
    }
    assertEquals(0, Callbacks.registeredReplicaFnCount(), "replica functions still registered");
  }

  @Test
  void failingAndThrowingReplicas() {
    try (CairnContext ctx = splitContext(2);
        MirroredStrategy s = MirroredStrategy.create(ctx, Duration.ofSeconds(60))) {
      // Replica 1 fails; replica 0 waits in an all-reduce that can never complete: it ends at once.
      long start = System.nanoTime();
      CairnException e = assertThrows(CairnException.class, () -> s.run(r -> {
        if (r.id() == 1) throw new CairnException(Code.DATA_LOSS, "the replica's data is bad");
        try (Tensor one = Tensor.scalar(r.context(), 1f)) {
          r.allReduce(Reduction.SUM, one).forEach(Tensor::close);
        }
        return List.of();
      }));
      assertEquals(Code.DATA_LOSS, e.code());
      assertTrue(e.getMessage().contains("replica 1") && e.getMessage().contains("the replica's data is bad"),
          e.getMessage());
      assertInstanceOf(CairnException.class, e.getCause());
      assertTrue(System.nanoTime() - start < 30_000_000_000L, "the failed run took too long");

      // A Java exception becomes UNKNOWN, with the exception as the cause.
      e = assertThrows(CairnException.class, () -> s.run(r -> {
        if (r.id() == 0) throw new IllegalStateException("boom");
        return List.of();
      }));
      assertEquals(Code.UNKNOWN, e.code());
      assertTrue(e.getMessage().contains("replica 0") && e.getMessage().contains("boom"), e.getMessage());
      assertInstanceOf(IllegalStateException.class, e.getCause());

      // A run cannot start another.
      e = assertThrows(CairnException.class, () -> s.run(r -> s.run(q -> List.of()).get(0)));
      assertEquals(Code.FAILED_PRECONDITION, e.code(), e.getMessage());

      // A replica used after its step is refused.
      List<Replica> kept = new ArrayList<>();
      s.run(r -> {
        synchronized (kept) {
          kept.add(r);
        }
        return List.of();
      });
      e = assertThrows(CairnException.class, () -> kept.get(0).id());
      assertEquals(Code.FAILED_PRECONDITION, e.code());

      // The strategy still works.
      List<List<Tensor>> out = s.run(r -> List.of());
      assertEquals(2, out.size());
      assertTrue(out.get(0).isEmpty());
    }
    assertEquals(0, Callbacks.registeredReplicaFnCount(), "replica functions still registered");
  }

  @Test
  void splitBatchIteratorAndAverageLoss() {
    try (CairnContext ctx = splitContext(2);
        MirroredStrategy s = MirroredStrategy.create(ctx, "cpu:1", "cpu:0");
        Tensor g = Tensor.of(ctx, new float[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 5, 2);
        Tensor y = Tensor.of(ctx, new int[] {0, 1, 2, 3, 4}, 5);
        Tensor one = Tensor.scalar(ctx, 1f)) {
      List<Tensor> parts = s.splitBatch(g);
      try {
        assertArrayEquals(new long[] {3, 2}, parts.get(0).shape());
        assertArrayEquals(new long[] {2, 2}, parts.get(1).shape());
        assertEquals("cpu:1", parts.get(0).device());
        assertArrayEquals(new float[] {6, 7, 8, 9}, parts.get(1).toFloatArray());
      } finally {
        parts.forEach(Tensor::close);
      }
      CairnException e = assertThrows(CairnException.class, () -> s.splitBatch(one));
      assertEquals(Code.INVALID_ARGUMENT, e.code());

      try (Dataset slices = Dataset.fromTensorSlices(ctx, g, y);
          Dataset ds = slices.batch(4, false);
          DatasetIterator it = ds.iterate()) {
        List<List<Tensor>> first = s.next(it);
        try {
          assertEquals(2, first.size());
          assertArrayEquals(new long[] {2, 2}, first.get(1).get(0).shape());
          assertArrayEquals(new int[] {2, 3}, first.get(1).get(1).toIntArray());
        } finally {
          closeAll(first);
        }
        // The last global batch has 1 row for 2 replicas.
        e = assertThrows(CairnException.class, () -> s.next(it));
        assertEquals(Code.INVALID_ARGUMENT, e.code());
        assertNull(s.next(it));
      }

      try (Tensor loss = Tensor.of(ctx, new float[] {1, 2, 3, 4}, 4);
          Tensor avg = MirroredStrategy.computeAverageLoss(ctx, loss, 8)) {
        assertArrayEquals(new float[] {1.25f}, avg.toFloatArray());
        e = assertThrows(CairnException.class, () -> MirroredStrategy.computeAverageLoss(ctx, loss, 0));
        assertEquals(Code.INVALID_ARGUMENT, e.code());
      }
    }
  }

  /** 64 samples of 4 features in 3 classes. */
  private static Tensor[] blobs(CairnContext ctx) {
    float[] x = new float[64 * 4];
    int[] y = new int[64];
    for (int i = 0; i < 64; ++i) {
      y[i] = i % 3;
      for (int f = 0; f < 4; ++f) x[i * 4 + f] = (float) Math.sin(i * 7 + f * 13) * 0.8f + (f == i % 3 ? 2 : 0);
    }
    return new Tensor[] {Tensor.of(ctx, x, 64, 4), Tensor.of(ctx, y, 64)};
  }

  /**
   * Dense(16, relu) -> Dense(3) with SGD, made and compiled in {@code s}'s scope when given, trained
   * 3 epochs of 16-row global batches; its weights, concatenated.
   */
  private static float[] train(CairnContext ctx, MirroredStrategy s) throws Exception {
    java.util.concurrent.Callable<Model> build = () -> {
      try (Layer hidden = Layers.dense(ctx, Layers.denseOptions(16).activation("relu"));
          Layer logits = Layers.dense(ctx, 3);
          Optimizer sgd = Optimizer.sgd(ctx, 0.1)) {
        return Model.create(ctx, "net", hidden, logits).compile(sgd, "sparse_categorical_crossentropy");
      }
    };
    Tensor[] xy = blobs(ctx);
    try (Model model = s == null ? build.call() : s.scope(build)) {
      model.fit(xy[0], xy[1], Model.fitOptions().epochs(3).batchSize(16).verbose(Verbose.SILENT));
      List<Variable> ws = model.weights();
      List<Float> all = new ArrayList<>();
      for (Variable v : ws) {
        try (Tensor t = v.read()) {
          for (float f : t.toFloatArray()) all.add(f);
        }
        v.close();
      }
      float[] out = new float[all.size()];
      for (int i = 0; i < out.length; ++i) out[i] = all.get(i);
      return out;
    } finally {
      xy[0].close();
      xy[1].close();
    }
  }

  @Test
  void fitInScopeMatchesOneDevice() throws Exception {
    try (CairnContext one = splitContext(1);
        CairnContext two = splitContext(2);
        MirroredStrategy s = MirroredStrategy.create(two)) {
      float[] w1 = train(one, null);
      float[] w2 = train(two, s);
      assertEquals(4 * 16 + 16 + 16 * 3 + 3, w1.length);
      assertEquals(w1.length, w2.length);
      float maxW = 0, maxDiff = 0;
      for (int i = 0; i < w1.length; ++i) {
        maxW = Math.max(maxW, Math.abs(w1[i]));
        maxDiff = Math.max(maxDiff, Math.abs(w1[i] - w2[i]));
      }
      // The replicas' gradients are summed in another order than one device's: the bound of the
      // float reduction order over 12 SGD steps (as tests/capi/distribute_test.c).
      assertTrue(maxDiff <= 1e-5f * maxW && maxW > 0.1f, "max |w2 - w1| = " + maxDiff + ", max |w| = " + maxW);
    }
  }

  @Test
  void badInputAndScopes() throws Exception {
    try (CairnContext ctx = splitContext(2)) {
      CairnException e = assertThrows(CairnException.class, () -> MirroredStrategy.create(ctx, "cpu:0", "cpu:7"));
      assertEquals(Code.NOT_FOUND, e.code());
      assertTrue(e.getMessage().contains("cpu:7"), e.getMessage());
      e = assertThrows(CairnException.class, () -> MirroredStrategy.create(ctx, "cpu:1", "cpu:1"));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      e = assertThrows(CairnException.class, () -> MirroredStrategy.create(ctx, Duration.ZERO));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("collective_timeout_ms"), e.getMessage());

      MirroredStrategy s = MirroredStrategy.create(ctx);
      assertEquals(7, (int) s.scope(() -> 7));
      assertThrows(IllegalStateException.class, () -> s.scope((Runnable) () -> {
        throw new IllegalStateException("in scope");
      }));
      // The scope was left: closing it on another thread is refused.
      StrategyScope open = s.scope();
      Thread t = new Thread(() -> assertThrows(CairnException.class, open::close));
      t.start();
      t.join();
      open.close();
      e = assertThrows(CairnException.class, () -> CairnNative.strategyScopeExit(s.handle()));
      assertEquals(Code.FAILED_PRECONDITION, e.code());
      s.close();
      s.close();
      e = assertThrows(CairnException.class, () -> s.run(r -> List.of()));
      assertEquals(Code.FAILED_PRECONDITION, e.code());
      assertTrue(e.getMessage().contains("MirroredStrategy.run: mirrored strategy is closed"), e.getMessage());
    }
  }
}
