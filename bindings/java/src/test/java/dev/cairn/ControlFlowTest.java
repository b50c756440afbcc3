package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ControlFlow and TensorArray: eagerly (the lambdas run as called) and inside compiled functions
 * (each lambda traced once, the data picking branches and trip counts at replay), host exceptions
 * coming back as errors, and the RNN over a data-dependent length compared with its eager run.
 */
class ControlFlowTest {
  private CairnContext ctx;
  private int registeredBefore;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
    registeredBefore = Callbacks.registeredFunctionFnCount();
  }

  @AfterEach
  void close() {
    // Every cond / whileLoop releases its lambdas, whether it succeeded or failed.
    assertEquals(registeredBefore, Callbacks.registeredFunctionFnCount());
    ctx.close();
  }

  private static void closeAll(Tensor... ts) {
    for (Tensor t : ts) if (t != null) t.close();
  }

  private static int intOf(Tensor[] ts, int k) {
    try {
      return ts[k].toIntArray()[0];
    } finally {
      closeAll(ts);
    }
  }

  // ---- lambdas shared by the tests ----

  /** Loop variables (i, acc, n): while i < n: acc += i; i += 1. */
  private static Tensor[] sumBelow(CairnContext c, Tensor n, AtomicInteger condCalls, AtomicInteger bodyCalls) {
    try (Tensor i0 = Tensor.scalar(c, 0); Tensor acc0 = Tensor.scalar(c, 0)) {
      return ControlFlow.whileLoop(c, (cc, v) -> {
        condCalls.incrementAndGet();
        return Ops.less(cc, v[0], v[2]);
      }, (cc, v) -> {
        bodyCalls.incrementAndGet();
        try (Tensor one = Tensor.scalar(cc, 1)) {
          return new Tensor[] {Ops.add(cc, v[0], one), Ops.add(cc, v[1], v[0]), v[2]};
        }
      }, new Tensor[] {i0, acc0, n});
    }
  }

  /** x > 0 ? 2x : -x, counting the branch calls. */
  private static Tensor[] doubleOrNegate(CairnContext c, Tensor x, AtomicInteger branchCalls) {
    try (Tensor zero = Tensor.scalar(c, 0f); Tensor positive = Ops.greater(c, x, zero)) {
      return ControlFlow.cond(c, positive, new Tensor[] {x}, (cc, in) -> {
        branchCalls.incrementAndGet();
        return new Tensor[] {Ops.add(cc, in[0], in[0])};
      }, (cc, in) -> {
        branchCalls.incrementAndGet();
        return new Tensor[] {Ops.neg(cc, in[0])};
      }, 1);
    }
  }

  // ---- eager ----

  @Test
  void eagerCondRunsOnlyTheChosenBranch() {
    AtomicInteger calls = new AtomicInteger();
    try (Tensor three = Tensor.scalar(ctx, 3f); Tensor minusFour = Tensor.scalar(ctx, -4f)) {
      Tensor[] y = doubleOrNegate(ctx, three, calls);
      assertEquals(1, y.length);
      assertArrayEquals(new float[] {6}, y[0].toFloatArray());
      closeAll(y);
      assertEquals(1, calls.get());
      y = doubleOrNegate(ctx, minusFour, calls);
      assertArrayEquals(new float[] {4}, y[0].toFloatArray());
      closeAll(y);
      assertEquals(2, calls.get());
    }
  }

  @Test
  void eagerWhileSumsBelowN() {
    AtomicInteger condCalls = new AtomicInteger();
    AtomicInteger bodyCalls = new AtomicInteger();
    try (Tensor n = Tensor.scalar(ctx, 10)) {
      Tensor[] out = sumBelow(ctx, n, condCalls, bodyCalls);
      assertEquals(3, out.length);
      assertEquals(10, out[0].toIntArray()[0]);
      assertEquals(10, out[2].toIntArray()[0]);
      assertEquals(45, intOf(out, 1));
    }
    // Eagerly the lambdas run per iteration: cond n + 1 times, body n times.
    assertEquals(11, condCalls.get());
    assertEquals(10, bodyCalls.get());
  }

  @Test
  void maxIterationsStopsTheLoop() {
    try (Tensor n = Tensor.scalar(ctx, 100); Tensor i0 = Tensor.scalar(ctx, 0)) {
      Tensor[] out = ControlFlow.whileLoop(ctx, (c, v) -> Ops.less(c, v[0], v[1]), (c, v) -> {
        try (Tensor one = Tensor.scalar(c, 1)) {
          return new Tensor[] {Ops.add(c, v[0], one), v[1]};
        }
      }, new Tensor[] {i0, n}, 7);
      assertEquals(7, intOf(out, 0));
    }
  }

  // ---- compiled ----

  @Test
  void compiledLoopIsTracedOnceForEveryTripCount() {
    AtomicInteger traces = new AtomicInteger();
    AtomicInteger condCalls = new AtomicInteger();
    AtomicInteger bodyCalls = new AtomicInteger();
    try (CompiledFunction f = CompiledFunction.create(ctx, "sum_below", 1, (c, in) -> {
      traces.incrementAndGet();
      Tensor[] out = sumBelow(c, in[0], condCalls, bodyCalls);
      closeAll(out[0], out[2]);
      return new Tensor[] {out[1]};
    })) {
      for (int n : new int[] {0, 1, 5, 10, 100}) {
        try (Tensor nt = Tensor.scalar(ctx, n)) {
          assertEquals(n * (n - 1) / 2, intOf(f.call(nt), 0), "n = " + n);
        }
      }
      assertEquals(1, traces.get());
      assertEquals(1, condCalls.get());
      assertEquals(1, bodyCalls.get());
      assertEquals(1, f.numTraces());
      assertEquals(1, f.numOutputs(0));
      assertTrue(f.dump(0).contains("While"), f.dump(0));
      CairnException e = assertThrows(CairnException.class, () -> f.numOutputs(1));
      assertEquals(Code.OUT_OF_RANGE, e.code());
    }
  }

  @Test
  void compiledCondPicksTheBranchFromData() {
    AtomicInteger calls = new AtomicInteger();
    try (CompiledFunction f = CompiledFunction.create(ctx, "double_or_negate", 1,
            (c, in) -> doubleOrNegate(c, in[0], calls));
        Tensor three = Tensor.scalar(ctx, 3f);
        Tensor minusFour = Tensor.scalar(ctx, -4f);
        Tensor half = Tensor.scalar(ctx, 0.5f)) {
      Tensor[] y = f.call(three);
      assertArrayEquals(new float[] {6}, y[0].toFloatArray());
      closeAll(y);
      y = f.call(minusFour);
      assertArrayEquals(new float[] {4}, y[0].toFloatArray());
      closeAll(y);
      y = f.call(half);
      assertArrayEquals(new float[] {1}, y[0].toFloatArray());
      closeAll(y);
      assertEquals(2, calls.get()); // each branch traced once, never entered again
      assertEquals(1, f.numTraces());
      assertTrue(f.dump(0).contains("Cond"), f.dump(0));
    }
  }

  @Test
  void condInsideALoopCountsCollatzSteps() {
    // steps to reach 1: while x != 1: x = x even ? x / 2 : 3x + 1; steps += 1
    try (CompiledFunction f = CompiledFunction.create(ctx, "collatz", 1, (c, in) -> {
      try (Tensor steps0 = Tensor.scalar(c, 0); Tensor one = Tensor.scalar(c, 1)) {
        Tensor[] out = ControlFlow.whileLoop(c, (cc, v) -> Ops.notEqual(cc, v[0], one), (cc, v) -> {
          try (Tensor two = Tensor.scalar(cc, 2);
              Tensor three = Tensor.scalar(cc, 3);
              Tensor zero = Tensor.scalar(cc, 0);
              Tensor rest = Ops.floorMod(cc, v[0], two);
              Tensor even = Ops.equal(cc, rest, zero)) {
            Tensor[] next = ControlFlow.cond(cc, even, new Tensor[] {v[0]},
                (b, x) -> new Tensor[] {Ops.floorDiv(b, x[0], two)},
                (b, x) -> {
                  try (Tensor triple = Ops.mul(b, x[0], three)) {
                    return new Tensor[] {Ops.add(b, triple, one)};
                  }
                }, 1);
            return new Tensor[] {next[0], Ops.add(cc, v[1], one)};
          }
        }, new Tensor[] {in[0], steps0}, 1000); // a cap, so that a wrong branch cannot loop forever
        out[0].close();
        return new Tensor[] {out[1]};
      }
    })) {
      int[][] cases = {{1, 0}, {6, 8}, {7, 16}, {27, 111}};
      for (int[] cs : cases) {
        try (Tensor x = Tensor.scalar(ctx, cs[0])) {
          assertEquals(cs[1], intOf(f.call(x), 0), "collatz(" + cs[0] + ")");
        }
      }
      assertEquals(1, f.numTraces());
    }
  }

  // ---- TensorArray ----

  /** Loop variables (i, array, n): array[i] = i * i while i < n. */
  private static Tensor squares(CairnContext c, Tensor n, long size) {
    try (Tensor i0 = Tensor.scalar(c, 0); Tensor empty = TensorArray.create(c, DType.INT32, size)) {
      Tensor[] out = ControlFlow.whileLoop(c, (cc, v) -> Ops.less(cc, v[0], v[2]), (cc, v) -> {
        try (Tensor sq = Ops.mul(cc, v[0], v[0]); Tensor one = Tensor.scalar(cc, 1)) {
          return new Tensor[] {Ops.add(cc, v[0], one), TensorArray.write(cc, v[1], v[0], sq), v[2]};
        }
      }, new Tensor[] {i0, empty, n});
      closeAll(out[0], out[2]);
      return out[1];
    }
  }

  @Test
  void tensorArrayFilledInACompiledLoop() {
    try (CompiledFunction f = CompiledFunction.create(ctx, "squares", 1,
        (c, in) -> new Tensor[] {squares(c, in[0], 6)})) {
      for (int n : new int[] {0, 4, 6}) {
        try (Tensor nt = Tensor.scalar(ctx, n)) {
          Tensor[] out = f.call(nt);
          int[] expected = new int[6];
          for (int i = 0; i < n; ++i) expected[i] = i * i; // unwritten elements stay zero
          assertArrayEquals(new long[] {6}, out[0].shape());
          assertArrayEquals(expected, out[0].toIntArray(), "n = " + n);
          if (n > 3) {
            try (Tensor third = TensorArray.read(ctx, out[0], 3)) {
              assertArrayEquals(new int[] {9}, third.toIntArray());
              assertEquals(0, third.rank());
            }
          }
          closeAll(out);
        }
      }
      assertEquals(1, f.numTraces());
    }
  }

  @Test
  void tensorArrayEagerlyWithElementShape() {
    try (Tensor empty = TensorArray.create(ctx, DType.FLOAT32, 3, 2);
        Tensor row = Tensor.of(ctx, new float[] {1.5f, -2}, 2);
        Tensor one = Tensor.scalar(ctx, 1L);
        Tensor filled = TensorArray.write(ctx, empty, one, row);
        Tensor back = TensorArray.read(ctx, filled, 1);
        Tensor zeros = TensorArray.read(ctx, filled, 2)) {
      assertArrayEquals(new long[] {3, 2}, empty.shape());
      assertArrayEquals(new float[] {0, 0, 1.5f, -2, 0, 0}, filled.toFloatArray());
      assertArrayEquals(new float[] {0, 0, 0, 0, 0, 0}, empty.toFloatArray()); // writes return a new array
      assertArrayEquals(new float[] {1.5f, -2}, back.toFloatArray());
      assertArrayEquals(new float[] {0, 0}, zeros.toFloatArray());

      CairnException e = assertThrows(CairnException.class, () -> TensorArray.read(ctx, filled, 3));
      assertEquals(Code.OUT_OF_RANGE, e.code());
      assertTrue(e.getMessage().contains("index 3"), e.getMessage());
      e = assertThrows(CairnException.class, () -> TensorArray.write(ctx, filled, -1, row));
      assertEquals(Code.OUT_OF_RANGE, e.code());
      e = assertThrows(CairnException.class, () -> TensorArray.write(ctx, filled, 0, one));
      assertEquals(Code.INVALID_ARGUMENT, e.code()); // an int64 scalar is not a float32[2] element
      e = assertThrows(CairnException.class, () -> TensorArray.create(ctx, DType.FLOAT32, -1));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("size"), e.getMessage());
    }
  }

  // ---- errors ----

  @Test
  void aNonBoolPredicateIsRefused() {
    AtomicInteger calls = new AtomicInteger();
    try (Tensor notBool = Tensor.scalar(ctx, 1); Tensor x = Tensor.scalar(ctx, 2f)) {
      ControlFlow.Branch same = (c, in) -> {
        calls.incrementAndGet();
        return new Tensor[] {in[0]};
      };
      CairnException e = assertThrows(CairnException.class,
          () -> ControlFlow.cond(ctx, notBool, new Tensor[] {x}, same, same, 1));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("bool"), e.getMessage());
      assertNull(e.getCause());
      assertEquals(0, calls.get());

      // The same for a loop condition that does not give a bool, here inside a trace.
      try (CompiledFunction f = CompiledFunction.create(ctx, "int_cond", 1, (c, in) -> ControlFlow.whileLoop(c,
          (cc, v) -> Ops.identity(cc, v[0]), (cc, v) -> new Tensor[] {v[0]}, new Tensor[] {in[0]}))) {
        e = assertThrows(CairnException.class, () -> f.call(notBool));
        assertEquals(Code.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("bool"), e.getMessage());
        assertEquals(0, f.numTraces());
      }
    }
  }

  @Test
  void aHostErrorInTheBodyComesBackEagerly() {
    try (Tensor n = Tensor.scalar(ctx, 3); Tensor i0 = Tensor.scalar(ctx, 0); Tensor t = Tensor.scalar(ctx, true)) {
      AtomicInteger bodyCalls = new AtomicInteger();
      CairnException e = assertThrows(CairnException.class, () -> ControlFlow.whileLoop(ctx,
          (c, v) -> Ops.less(c, v[0], v[1]), (c, v) -> {
            if (bodyCalls.incrementAndGet() == 2) throw new IllegalStateException("the body refuses");
            try (Tensor one = Tensor.scalar(c, 1)) {
              return new Tensor[] {Ops.add(c, v[0], one), v[1]};
            }
          }, new Tensor[] {i0, n}));
      assertEquals(Code.UNKNOWN, e.code());
      assertEquals("UNKNOWN: whileLoop's body: IllegalStateException: the body refuses", e.getMessage());
      assertInstanceOf(IllegalStateException.class, e.getCause());
      assertEquals(2, bodyCalls.get());

      // A CairnException keeps its code; an Error passes through unchanged.
      e = assertThrows(CairnException.class, () -> ControlFlow.cond(ctx, t, new Tensor[] {},
          (c, in) -> {
            throw new CairnException(Code.FAILED_PRECONDITION, "not now");
          }, (c, in) -> new Tensor[] {}, 0));
      assertEquals(Code.FAILED_PRECONDITION, e.code());
      assertEquals("FAILED_PRECONDITION: cond's then branch: not now", e.getMessage());
      AssertionError error = new AssertionError("deliberate");
      assertSame(error, assertThrows(AssertionError.class, () -> ControlFlow.whileLoop(ctx,
          (c, v) -> {
            throw error;
          }, (c, v) -> v, new Tensor[] {i0})));
    }
  }

  @Test
  void aHostErrorInANestedBodyComesBackFromTheCall() {
    AtomicInteger traces = new AtomicInteger();
    try (CompiledFunction f = CompiledFunction.create(ctx, "failing", 1, (c, in) -> {
      traces.incrementAndGet();
      Tensor[] out = ControlFlow.whileLoop(c, (cc, v) -> Ops.less(cc, v[0], v[0]), (cc, v) -> {
        try (Tensor t = Tensor.scalar(cc, true)) {
          return ControlFlow.cond(cc, t, v, (b, x) -> {
            throw new IllegalArgumentException("deep inside");
          }, (b, x) -> x, 1);
        }
      }, new Tensor[] {in[0]});
      return out;
    }); Tensor x = Tensor.scalar(ctx, 1)) {
      CairnException e = assertThrows(CairnException.class, () -> f.call(x));
      assertEquals(Code.UNKNOWN, e.code());
      assertEquals("UNKNOWN: function 'failing': whileLoop's body: cond's then branch: IllegalArgumentException: deep inside",
          e.getMessage());
      Throwable root = e;
      while (root.getCause() != null) root = root.getCause();
      assertInstanceOf(IllegalArgumentException.class, root);
      assertEquals(0, f.numTraces()); // nothing cached: the next call traces again
      assertThrows(CairnException.class, () -> f.call(x));
      assertEquals(2, traces.get());
    }
  }

  @Test
  void aBodyChangingALoopVariablesShapeIsRefused() {
    ControlFlow.Branch grow = (c, v) -> {
      try (Tensor one = Tensor.scalar(c, 1f)) {
        return new Tensor[] {Ops.reshape(c, v[0], 1, 2), Ops.add(c, v[1], one)};
      }
    };
    ControlFlow.Condition below3 = (c, v) -> {
      try (Tensor three = Tensor.scalar(c, 3f)) {
        return Ops.less(c, v[1], three);
      }
    };
    try (Tensor x = Tensor.of(ctx, new float[] {1, 2}, 2); Tensor i0 = Tensor.scalar(ctx, 0f)) {
      CairnException e = assertThrows(CairnException.class,
          () -> ControlFlow.whileLoop(ctx, below3, grow, new Tensor[] {x, i0}));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("keeps its dtype and shape"), e.getMessage());
      try (CompiledFunction f = CompiledFunction.create(ctx, "grow", 2,
          (c, in) -> ControlFlow.whileLoop(c, below3, grow, in))) {
        e = assertThrows(CairnException.class, () -> f.call(x, i0));
        assertEquals(Code.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("float32[1,2]"), e.getMessage());
      }
    }
  }

  @Test
  void wrongResultCountsAndBadArguments() {
    try (Tensor t = Tensor.scalar(ctx, true); Tensor x = Tensor.scalar(ctx, 1f)) {
      CairnException e = assertThrows(CairnException.class,
          () -> ControlFlow.cond(ctx, t, new Tensor[] {x}, (c, in) -> new Tensor[] {}, (c, in) -> in, 1));
      assertEquals("UNKNOWN: cond's then branch: IllegalStateException: cond's then branch returned 0 tensor(s), expected 1",
          e.getMessage());
      e = assertThrows(CairnException.class, () -> ControlFlow.whileLoop(ctx, (c, v) -> null, (c, v) -> v,
          new Tensor[] {x}));
      assertTrue(e.getMessage().startsWith("UNKNOWN: whileLoop's cond: NullPointerException"), e.getMessage());
      // (A condition returning `t` would close it: lambdas' results are taken, so they make new ones.)
      e = assertThrows(CairnException.class, () -> ControlFlow.whileLoop(ctx, (c, v) -> Tensor.scalar(c, true),
          (c, v) -> v, new Tensor[] {}));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("at least one loop variable"), e.getMessage());
      e = assertThrows(CairnException.class, () -> ControlFlow.whileLoop(ctx, (c, v) -> Tensor.scalar(c, true),
          (c, v) -> v, new Tensor[] {x}, -2));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertThrows(NullPointerException.class, () -> ControlFlow.cond(ctx, null, new Tensor[] {}, (c, in) -> in,
          (c, in) -> in, 0));
      assertThrows(IllegalArgumentException.class, () -> ControlFlow.cond(ctx, t, new Tensor[] {}, (c, in) -> in,
          (c, in) -> in, -1));
    }
  }

  // ---- the RNN over a data-dependent length ----

  private static final int T = 6, BATCH = 2, IN = 3, HIDDEN = 4;

  /**
   * h = tanh(x_t W + h U) for t < n, each h written to a TensorArray of T outputs. Inputs x
   * [T, batch, in], W [in, hidden], U [hidden, hidden], n (int32). Returns (h, outputs).
   */
  private static Tensor[] rnn(CairnContext c, Tensor[] in, AtomicInteger bodyCalls) throws Exception {
    Tensor x = in[0], w = in[1], u = in[2], n = in[3];
    try (Tensor i0 = Tensor.scalar(c, 0);
        Tensor h0 = Tensor.of(c, new float[BATCH * HIDDEN], BATCH, HIDDEN);
        Tensor outs0 = TensorArray.create(c, DType.FLOAT32, T, BATCH, HIDDEN)) {
      Tensor[] out = ControlFlow.whileLoop(c, (cc, v) -> Ops.less(cc, v[0], n), (cc, v) -> {
        bodyCalls.incrementAndGet();
        try (Tensor xt = TensorArray.read(cc, x, v[0]);
            Tensor xw = Ops.matMul(cc, xt, w);
            Tensor hu = Ops.matMul(cc, v[1], u);
            Tensor sum = Ops.add(cc, xw, hu);
            Tensor one = Tensor.scalar(cc, 1)) {
          Tensor h = Ops.tanh(cc, sum);
          return new Tensor[] {Ops.add(cc, v[0], one), h, TensorArray.write(cc, v[2], v[0], h)};
        }
      }, new Tensor[] {i0, h0, outs0});
      out[0].close();
      return new Tensor[] {out[1], out[2]};
    }
  }

  private static float[] values(int n, int seed) {
    float[] v = new float[n];
    for (int i = 0; i < n; ++i) v[i] = (float) Math.sin(seed * 7.31 + i * 1.77) * 0.8f;
    return v;
  }

  /** The same recurrence in plain Java (double precision): outputs [T, batch, hidden]. */
  private static double[] reference(float[] x, float[] w, float[] u, int n) {
    double[] outs = new double[T * BATCH * HIDDEN];
    double[] h = new double[BATCH * HIDDEN];
    for (int t = 0; t < n; ++t) {
      double[] next = new double[BATCH * HIDDEN];
      for (int b = 0; b < BATCH; ++b) {
        for (int j = 0; j < HIDDEN; ++j) {
          double s = 0;
          for (int k = 0; k < IN; ++k) s += x[(t * BATCH + b) * IN + k] * w[k * HIDDEN + j];
          for (int k = 0; k < HIDDEN; ++k) s += h[b * HIDDEN + k] * u[k * HIDDEN + j];
          next[b * HIDDEN + j] = Math.tanh(s);
        }
      }
      h = next;
      System.arraycopy(h, 0, outs, t * BATCH * HIDDEN, BATCH * HIDDEN);
    }
    return outs;
  }

  private static void assertClose(float[] expected, float[] got, String what) {
    assertEquals(expected.length, got.length, what);
    for (int i = 0; i < got.length; ++i) assertEquals(expected[i], got[i], 1e-5, what + " [" + i + "]");
  }

  @Test
  void rnnOverADataDependentLengthMatchesEager() throws Exception {
    float[] xs = values(T * BATCH * IN, 1), ws = values(IN * HIDDEN, 2), us = values(HIDDEN * HIDDEN, 3);
    AtomicInteger tracedBody = new AtomicInteger();
    AtomicInteger eagerBody = new AtomicInteger();
    try (Tensor x = Tensor.of(ctx, xs, T, BATCH, IN);
        Tensor w = Tensor.of(ctx, ws, IN, HIDDEN);
        Tensor u = Tensor.of(ctx, us, HIDDEN, HIDDEN);
        CompiledFunction f = CompiledFunction.create(ctx, "rnn", 2, (c, in) -> rnn(c, in, tracedBody))) {
      for (int n : new int[] {0, 1, 4, T}) {
        try (Tensor nt = Tensor.scalar(ctx, n)) {
          Tensor[] compiled = f.call(x, w, u, nt);
          Tensor[] eager = rnn(ctx, new Tensor[] {x, w, u, nt}, eagerBody);
          try {
            float[] outs = compiled[1].toFloatArray();
            assertArrayEquals(new long[] {T, BATCH, HIDDEN}, compiled[1].shape());
            assertArrayEquals(new long[] {BATCH, HIDDEN}, compiled[0].shape());
            assertClose(eager[1].toFloatArray(), outs, "outputs, n = " + n);
            assertClose(eager[0].toFloatArray(), compiled[0].toFloatArray(), "h, n = " + n);
            double[] ref = reference(xs, ws, us, n);
            for (int i = 0; i < outs.length; ++i) assertEquals(ref[i], outs[i], 1e-5, "reference [" + i + "], n = " + n);
            for (int i = n * BATCH * HIDDEN; i < outs.length; ++i) assertEquals(0f, outs[i], "unwritten step");
          } finally {
            closeAll(compiled);
            closeAll(eager);
          }
        }
      }
      assertEquals(1, f.numTraces());
      assertEquals(1, tracedBody.get()); // traced once, whatever the length
      assertEquals(0 + 1 + 4 + T, eagerBody.get()); // eagerly once per step
      assertEquals(2, f.numOutputs(0));
    }
  }
}
