package dev.cairn;

import static dev.cairn.ClosedAssert.assertClosed;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Compiled functions: the seed's quiz (what runs at trace time and what at replay), retracing on a
 * new dtype, variables captured by reference, input signatures, host exceptions, a whole training
 * step captured, and the release of the Java body.
 */
class CompiledFunctionTest {
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private static float[] floats(Tensor[] ts) {
    try {
      return ts[0].toFloatArray();
    } finally {
      for (Tensor t : ts) t.close();
    }
  }

  /** y = x * x + v, counting its traces. */
  private CompiledFunction squarePlus(Variable v, AtomicInteger traces, CompiledFunction.Options options) {
    return CompiledFunction.create(ctx, "square_plus_v", 1, (c, in) -> {
      traces.incrementAndGet(); // a host side effect: runs only while tracing
      try (Tensor sq = Ops.mul(c, in[0], in[0]); Tensor vv = v.read()) {
        return new Tensor[] {Ops.add(c, sq, vv)};
      }
    }, options);
  }

  @Test
  void sideEffectsRunOnlyWhileTracing() {
    AtomicInteger traces = new AtomicInteger();
    List<String> printed = Collections.synchronizedList(new ArrayList<>());
    try (CompiledFunction f = CompiledFunction.create(ctx, "quiz", 1, (c, in) -> {
          traces.incrementAndGet();
          printed.add("tracing with " + in[0].dtype()); // the quiz's print()
          return new Tensor[] {Ops.add(c, in[0], in[0])};
        });
        Tensor a = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor b = Tensor.of(ctx, new float[] {5, 7}, 2)) {
      assertArrayEquals(new float[] {2, 4}, floats(f.call(a)));
      assertArrayEquals(new float[] {10, 14}, floats(f.call(b)));
      assertArrayEquals(new float[] {2, 4}, floats(f.call(a)));
      assertEquals(1, traces.get());
      assertEquals(List.of("tracing with FLOAT32"), printed);
      assertEquals(1, f.numTraces());
      assertEquals("float32[2]", f.signature(0));
      assertTrue(f.dump(0).contains("Add"), f.dump(0));
      CairnException e = assertThrows(CairnException.class, () -> f.dump(1));
      assertEquals(Code.OUT_OF_RANGE, e.code());
    }
  }

  @Test
  void replayDoesNotEnterJava() {
    AtomicBoolean allowed = new AtomicBoolean(true);
    try (CompiledFunction f = CompiledFunction.create(ctx, "guarded", 1, (c, in) -> {
          if (!allowed.get()) throw new AssertionError("the body ran during a replay");
          return new Tensor[] {Ops.mul(c, in[0], in[0])};
        });
        Tensor x = Tensor.of(ctx, new float[] {3, -2}, 2);
        Tensor x2 = Tensor.of(ctx, new float[] {4, 5}, 2)) {
      assertArrayEquals(new float[] {9, 4}, floats(f.call(x)));
      allowed.set(false);
      assertArrayEquals(new float[] {16, 25}, floats(f.call(x2)));
      // A new shape needs a trace, which now fails: the Error comes back as is.
      try (Tensor x3 = Tensor.of(ctx, new float[] {1, 2, 3}, 3)) {
        assertThrows(AssertionError.class, () -> f.call(x3));
      }
      assertEquals(1, f.numTraces());
    }
  }

  @Test
  void aNewDtypeRetraces() {
    AtomicInteger traces = new AtomicInteger();
    try (CompiledFunction f = CompiledFunction.create(ctx, "square", 1, (c, in) -> {
          traces.incrementAndGet();
          return new Tensor[] {Ops.mul(c, in[0], in[0])};
        });
        Tensor xf = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor xd = Tensor.of(ctx, new double[] {3, 4}, 2)) {
      floats(f.call(xf));
      Tensor[] yd = f.call(xd);
      try {
        assertEquals(DType.FLOAT64, yd[0].dtype());
        assertArrayEquals(new double[] {9, 16}, yd[0].toDoubleArray());
      } finally {
        yd[0].close();
      }
      floats(f.call(xf));
      f.call(xd)[0].close();
      assertEquals(2, traces.get());
      assertEquals(2, f.numTraces());
      assertEquals("float64[2]", f.signature(1));
    }
  }

  @Test
  void variablesAreCapturedByReference() {
    AtomicInteger traces = new AtomicInteger();
    try (Tensor init = Tensor.of(ctx, new float[] {10, 20}, 2);
        Variable v = Variable.create(ctx, init);
        CompiledFunction f = squarePlus(v, traces, null);
        Tensor x = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor zero = Tensor.of(ctx, new float[] {0, 0}, 2)) {
      assertArrayEquals(new float[] {11, 24}, floats(f.call(x)));
      v.assign(zero);
      assertArrayEquals(new float[] {1, 4}, floats(f.call(x)));
      assertEquals(1, traces.get());
    }
  }

  @Test
  void anInputSignatureWithAnyLengthTracesOnce() {
    AtomicInteger traces = new AtomicInteger();
    CompiledFunction.Options opts = CompiledFunction.options().inputSignature(TensorSpec.of(DType.FLOAT32, TensorSpec.ANY));
    try (Tensor init = Tensor.scalar(ctx, 5f);
        Variable v = Variable.create(ctx, init);
        CompiledFunction f = squarePlus(v, traces, opts);
        Tensor x2 = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor x3 = Tensor.of(ctx, new float[] {1, 2, 3}, 3);
        Tensor x5 = Tensor.of(ctx, new float[] {0, 1, 2, 3, 4}, 5);
        Tensor xi = Tensor.of(ctx, new int[] {1, 2}, 2)) {
      assertArrayEquals(new float[] {6, 9}, floats(f.call(x2)));
      assertArrayEquals(new float[] {6, 9, 14}, floats(f.call(x3)));
      assertArrayEquals(new float[] {5, 6, 9, 14, 21}, floats(f.call(x5)));
      assertEquals(2, traces.get()); // the second length is traced once more, as a check

      assertEquals(1, f.numTraces());
      assertEquals("float32[-1]", f.signature(0));
      CairnException e = assertThrows(CairnException.class, () -> f.call(xi));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertEquals(1, traces.get());
    }
  }

  @Test
  void aBadSignatureIsRefusedAndReleasesTheBody() {
    int before = Callbacks.registeredFunctionFnCount();
    assertThrows(IllegalArgumentException.class, () -> TensorSpec.of(DType.FLOAT32, -2));
    CairnException e = assertThrows(CairnException.class,
        () -> CompiledFunction.create(ctx, "", 1, (c, in) -> in));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertEquals(before, Callbacks.registeredFunctionFnCount());
  }

  @Test
  void aJavaExceptionComesBackFromCallAndNothingIsCached() {
    AtomicInteger traces = new AtomicInteger();
    IllegalStateException boom = new IllegalStateException("boom");
    try (CompiledFunction f = CompiledFunction.create(ctx, "throws", 1, (c, in) -> {
          traces.incrementAndGet();
          Ops.mul(c, in[0], in[0]).close(); // some recording before the failure
          throw boom;
        });
        Tensor x = Tensor.of(ctx, new float[] {1, 2}, 2)) {
      CairnException e = assertThrows(CairnException.class, () -> f.call(x));
      assertEquals(Code.UNKNOWN, e.code());
      assertSame(boom, e.getCause());
      assertTrue(e.getMessage().contains("function 'throws'") && e.getMessage().contains("boom"), e.getMessage());
      assertEquals(0, f.numTraces());
      assertThrows(CairnException.class, () -> f.call(x));
      assertEquals(2, traces.get()); // nothing was cached: the second call traced again
    }
  }

  @Test
  void anOpErrorWhileTracingKeepsItsCode() {
    try (CompiledFunction f = CompiledFunction.create(ctx, "bad_matmul", 1,
            (c, in) -> new Tensor[] {Ops.matMul(c, in[0], in[0])});
        Tensor x = Tensor.of(ctx, new float[] {1, 2}, 2)) {
      CairnException e = assertThrows(CairnException.class, () -> f.call(x));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("MatMul"), e.getMessage());
      assertInstanceOf(CairnException.class, e.getCause());
      assertEquals(0, f.numTraces());
    }
  }

  @Test
  void theBodyMustReturnTheDeclaredCount() {
    try (CompiledFunction f = CompiledFunction.create(ctx, "two", 2, (c, in) -> new Tensor[] {Ops.neg(c, in[0])});
        Tensor x = Tensor.of(ctx, new float[] {1}, 1)) {
      CairnException e = assertThrows(CairnException.class, () -> f.call(x));
      assertTrue(e.getMessage().contains("returned 1 tensor(s), expected 2"), e.getMessage());
      assertInstanceOf(IllegalStateException.class, e.getCause());
    }
  }

  @Test
  void returningAnInputAndSeveralOutputs() {
    try (CompiledFunction f = CompiledFunction.create(ctx, "pair", 2, (c, in) -> new Tensor[] {in[0], Ops.neg(c, in[0])});
        Tensor x = Tensor.of(ctx, new float[] {1, -3}, 2)) {
      for (int k = 0; k < 2; ++k) {
        Tensor[] out = f.call(x);
        try {
          assertArrayEquals(new float[] {1, -3}, out[0].toFloatArray());
          assertArrayEquals(new float[] {-1, 3}, out[1].toFloatArray());
        } finally {
          for (Tensor t : out) t.close();
        }
      }
      assertEquals(1, f.numTraces());
    }
  }

  @Test
  void aFunctionCalledWhileAnotherTraces() {
    AtomicInteger innerTraces = new AtomicInteger();
    try (CompiledFunction inner = CompiledFunction.create(ctx, "inner", 1, (c, in) -> {
          innerTraces.incrementAndGet();
          return new Tensor[] {Ops.mul(c, in[0], in[0])};
        });
        CompiledFunction outer = CompiledFunction.create(ctx, "outer", 1, (c, in) -> {
          Tensor[] sq = inner.call(in[0]);
          try {
            return new Tensor[] {Ops.add(c, sq[0], in[0])};
          } finally {
            sq[0].close();
          }
        });
        Tensor x = Tensor.of(ctx, new float[] {2, 3}, 2)) {
      assertArrayEquals(new float[] {6, 12}, floats(outer.call(x)));
      assertArrayEquals(new float[] {6, 12}, floats(outer.call(x)));
      assertEquals(1, outer.numTraces());
      assertEquals(1, innerTraces.get());
    }
  }

  @Test
  void tooManyRetracesWarnThroughTheLog() {
    List<String> warnings = Collections.synchronizedList(new ArrayList<>());
    try (CairnContext logged = new CairnContext(CairnContext.options().logHandler((level, message) -> {
          if (level == LogLevel.WARNING) warnings.add(message);
        }));
        CompiledFunction f = CompiledFunction.create(logged, "shapes", 1,
            (c, in) -> new Tensor[] {Ops.neg(c, in[0])}, CompiledFunction.options().retraceWarning(3))) {
      for (int n = 1; n <= 3; ++n) {
        try (Tensor x = Tensor.of(logged, new float[n], n)) {
          f.call(x)[0].close();
        }
        assertEquals(n < 3 ? 0 : 1, warnings.size(), warnings.toString());
      }
      assertTrue(warnings.get(0).contains("'shapes' has been traced 3 times"), warnings.get(0));
    }
  }

  @Test
  void aWholeTrainingStepIsCaptured() {
    AtomicInteger traces = new AtomicInteger();
    try (Layer dense = Layers.dense(ctx, Layers.denseOptions(1).kernelInitializer("zeros"));
        Optimizer sgd = Optimizer.sgd(ctx, 0.1);
        CompiledFunction step = CompiledFunction.create(ctx, "train_step", 1, (c, in) -> {
          traces.incrementAndGet();
          try (GradientTape tape = GradientTape.create(c);
              Tensor pred = dense.call(in[0], true)) {
            Tensor loss = Loss.meanSquaredError(c, in[1], pred);
            List<Variable> weights = dense.trainableWeights();
            Tensor[] grads = tape.gradient(loss, weights);
            try {
              sgd.applyGradients(grads, weights);
            } finally {
              for (Tensor g : grads) g.close();
              weights.forEach(Variable::close);
            }
            return new Tensor[] {loss};
          }
        });
        // y = 2x + 1
        Tensor x = Tensor.of(ctx, new float[] {0, 1, 2, 3}, 4, 1);
        Tensor y = Tensor.of(ctx, new float[] {1, 3, 5, 7}, 4, 1)) {
      float first = floats(step.call(x, y))[0];
      float last = first;
      for (int i = 0; i < 300; ++i) last = floats(step.call(x, y))[0];
      assertEquals(1, traces.get());
      assertEquals(301, sgd.iterations());
      assertTrue(last < first * 1e-3f, "loss went from " + first + " to " + last);
      List<Variable> w = dense.weights();
      try (Tensor kernel = w.get(0).read(); Tensor bias = w.get(1).read()) {
        assertEquals(2, kernel.toFloatArray()[0], 1e-2);
        assertEquals(1, bias.toFloatArray()[0], 1e-2);
      } finally {
        w.forEach(Variable::close);
      }
    }
  }

  @Test
  void closingReleasesTheBody() {
    int before = Callbacks.registeredFunctionFnCount();
    CompiledFunction f = CompiledFunction.create(ctx, "released", 1, (c, in) -> new Tensor[] {Ops.neg(c, in[0])});
    assertEquals(before + 1, Callbacks.registeredFunctionFnCount());
    try (Tensor x = Tensor.of(ctx, new float[] {1}, 1)) {
      floats(f.call(x));
    }
    f.close();
    f.close(); // idempotent
    assertEquals(before, Callbacks.registeredFunctionFnCount());
    assertClosed("FAILED_PRECONDITION: CompiledFunction.numTraces: compiled function is closed", f::numTraces);
  }

  /** A static input's value keys the cache: read while tracing, a new value retraces. */
  @Test
  void staticInputValuesKeyTheCache() throws Exception {
    AtomicInteger traces = new AtomicInteger();
    CompiledFunction.Options options = new CompiledFunction.Options().staticInputs(1);
    try (CompiledFunction f = CompiledFunction.create(ctx, "double_n_times", 1, (c, in) -> {
          traces.incrementAndGet();
          int n = (int) in[1].toFloatArray()[0];
          Tensor y = Ops.add(c, in[0], in[0]);
          for (int k = 1; k < n; ++k) {
            Tensor next = Ops.add(c, y, y);
            y.close();
            y = next;
          }
          return new Tensor[] {y};
        }, options);
        Tensor x = Tensor.of(ctx, new float[] {1, 3}, 2);
        Tensor two = Tensor.of(ctx, new float[] {2});
        Tensor three = Tensor.of(ctx, new float[] {3})) {
      assertArrayEquals(new float[] {4, 12}, floats(f.call(x, two)));
      assertArrayEquals(new float[] {8, 24}, floats(f.call(x, three)));
      assertArrayEquals(new float[] {4, 12}, floats(f.call(x, two)));
      assertEquals(2, traces.get());
      assertEquals(2, f.numTraces());
      java.nio.file.Path path = java.nio.file.Files.createTempDirectory("cairn").resolve("static.cairnfn");
      CairnException e = assertThrows(CairnException.class, () -> f.export(path.toString()));
      assertEquals(Code.UNIMPLEMENTED, e.code());
    }
    assertThrows(IllegalArgumentException.class, () -> new CompiledFunction.Options().staticInputs(-1));
  }
}
