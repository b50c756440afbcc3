package dev.cairn;

import static dev.cairn.ClosedAssert.assertClosed;
import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** GradientTape: watching tensors and variables, pausing, gradients, unconnected sources, threads. */
class GradientTapeTest {
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private Variable var(float value, String name) {
    try (Tensor t = Tensor.scalar(ctx, value)) {
      return Variable.create(ctx, t, Variable.options().name(name));
    }
  }

  private static float scalar(Tensor t) {
    return t.toFloatArray()[0];
  }

  private static void closeAll(Tensor... ts) {
    for (Tensor t : ts) if (t != null) t.close();
  }

  @Test
  void gradientOfWatchedTensors() {
    // y = sum(x * x * w): dy/dx = 2 x w; w is not watched, so it is unconnected.
    try (Tensor x = Tensor.of(ctx, new float[] {1, -2}, 2);
        Tensor w = Tensor.of(ctx, new float[] {3, 0.5f}, 2);
        GradientTape tape = GradientTape.create(ctx)) {
      assertFalse(tape.persistent());
      tape.watch(x);
      try (Tensor sq = Ops.mul(ctx, x, x);
          Tensor prod = Ops.mul(ctx, sq, w);
          Tensor y = Ops.sum(ctx, prod)) {
        Tensor[] g = tape.gradient(y, x, w);
        try {
          assertEquals(2, g.length);
          assertArrayEquals(new float[] {6, -2}, g[0].toFloatArray());
          assertNull(g[1]);
        } finally {
          closeAll(g);
        }
        // A non-persistent tape gives one gradient call.
        CairnException e = assertThrows(CairnException.class, () -> tape.gradient(y, x));
        assertEquals(Code.FAILED_PRECONDITION, e.code());
        assertTrue(e.getMessage().contains("non-persistent"), e.getMessage());
      }
    }
  }

  @Test
  void unconnectedZeroAndOutputGradient() {
    try (Tensor x = Tensor.of(ctx, new float[] {1, 2, 3}, 3);
        Tensor other = Tensor.of(ctx, new float[] {5, 6}, 2);
        Tensor dy = Tensor.of(ctx, new float[] {1, 10, 100}, 3);
        GradientTape tape = GradientTape.create(ctx, GradientTape.options().persistent(true))) {
      assertTrue(tape.persistent());
      tape.watch(x);
      tape.watch(other);
      try (Tensor y = Ops.mul(ctx, x, x)) {
        Tensor[] g = tape.gradient(y, new Tensor[] {x, other}, dy, Unconnected.ZERO);
        try {
          assertArrayEquals(new float[] {2, 40, 600}, g[0].toFloatArray()); // 2 x * dy
          assertArrayEquals(new float[] {0, 0}, g[1].toFloatArray());
        } finally {
          closeAll(g);
        }
        // Persistent: a second call works; without an output gradient the target is summed.
        Tensor[] again = tape.gradient(y, x);
        try {
          assertArrayEquals(new float[] {2, 4, 6}, again[0].toFloatArray());
        } finally {
          closeAll(again);
        }
      }
    }
  }

  @Test
  void variablesReadUnderTheTape() {
    try (Variable a = var(3, "a");
        Variable b = var(4, "b");
        Variable unused = var(1, "unused");
        GradientTape tape = GradientTape.create(ctx, GradientTape.options().persistent(true))) {
      try (Tensor ra = a.read();
          Tensor rb = b.read();
          Tensor ab = Ops.mul(ctx, ra, rb);
          Tensor ra2 = a.read();
          Tensor y = Ops.add(ctx, ab, ra2)) { // y = a b + a: dy/da = b + 1 (two reads), dy/db = a
        Tensor[] g = tape.gradient(y, a, b, unused);
        try {
          assertEquals(5, scalar(g[0]));
          assertEquals(3, scalar(g[1]));
          assertNull(g[2]);
        } finally {
          closeAll(g);
        }
        Tensor[] z = tape.gradient(y, new Variable[] {unused}, null, Unconnected.ZERO);
        try {
          assertEquals(0, scalar(z[0]));
        } finally {
          closeAll(z);
        }
        Tensor[] fromList = tape.gradient(y, List.of(b));
        try {
          assertEquals(3, scalar(fromList[0]));
        } finally {
          closeAll(fromList);
        }
      }
    }
  }

  @Test
  void watchAccessedVariablesOffNeedsAnExplicitWatch() {
    try (Variable a = var(2, "a");
        Variable b = var(5, "b");
        GradientTape tape = GradientTape.create(ctx, GradientTape.options().watchAccessedVariables(false))) {
      tape.watch(b);
      try (Tensor ra = a.read();
          Tensor rb = b.read();
          Tensor y = Ops.mul(ctx, ra, rb)) {
        Tensor[] g = tape.gradient(y, a, b);
        try {
          assertNull(g[0]);
          assertEquals(2, scalar(g[1]));
        } finally {
          closeAll(g);
        }
      }
    }
  }

  @Test
  void stopRecordingHidesOps() {
    try (Tensor x = Tensor.scalar(ctx, 3f);
        GradientTape tape = GradientTape.create(ctx, GradientTape.options().persistent(true))) {
      tape.watch(x);
      tape.stopRecording();
      try (Tensor hidden = Ops.mul(ctx, x, x)) {
        tape.resumeRecording();
        try (Tensor y = Ops.mul(ctx, hidden, x)) { // only the outer Mul is recorded: dy/dx = x^2
          Tensor[] g = tape.gradient(y, x);
          try {
            assertEquals(9, scalar(g[0]));
          } finally {
            closeAll(g);
          }
        }
      }
    }
  }

  @Test
  void nestedTapesGiveSecondDerivatives() {
    try (Tensor x = Tensor.scalar(ctx, 2f);
        GradientTape outer = GradientTape.create(ctx)) {
      outer.watch(x);
      Tensor[] dy;
      try (GradientTape inner = GradientTape.create(ctx)) {
        inner.watch(x);
        try (Tensor x2 = Ops.mul(ctx, x, x);
            Tensor y = Ops.mul(ctx, x2, x)) { // y = x^3
          dy = inner.gradient(y, x); // 3 x^2 = 12, recorded by the outer tape
        }
      }
      try {
        assertEquals(12, scalar(dy[0]));
        Tensor[] d2 = outer.gradient(dy[0], x); // 6 x = 12
        try {
          assertEquals(12, scalar(d2[0]));
        } finally {
          closeAll(d2);
        }
      } finally {
        closeAll(dy);
      }
    }
  }

  @Test
  void errors() {
    try (Tensor ints = Tensor.of(ctx, new int[] {1, 2}, 2);
        Tensor x = Tensor.scalar(ctx, 1f);
        Trackable notVariable = Trackable.create(ctx);
        GradientTape tape = GradientTape.create(ctx)) {
      CairnException e = assertThrows(CairnException.class, () -> tape.watch(ints));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertThrows(NullPointerException.class, () -> tape.gradient(x, (Tensor) null));
      // A Trackable handed where a variable is expected (through the raw layer).
      e = assertThrows(CairnException.class,
          () -> CairnNative.tapeWatchVariable(tape.handle(), notVariable.handle()));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
    }
    GradientTape closed = GradientTape.create(ctx);
    closed.close();
    closed.close(); // idempotent
    assertTrue(closed.isClosed());
    assertClosed("FAILED_PRECONDITION: GradientTape.stopRecording: gradient tape is closed", closed::stopRecording);
  }

  @Test
  void anotherThreadCannotTakeTheGradient() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Tensor x = Tensor.scalar(ctx, 2f);
        GradientTape tape = GradientTape.create(ctx)) {
      tape.watch(x);
      try (Tensor y = Ops.mul(ctx, x, x)) {
        Future<?> f = pool.submit(() -> tape.gradient(y, x));
        Exception e = assertThrows(Exception.class, f::get);
        assertTrue(e.getCause() instanceof CairnException, e.toString());
        assertEquals(Code.FAILED_PRECONDITION, ((CairnException) e.getCause()).code());
        // Ops of another thread are not recorded: z depends on x only through that thread.
        Future<Tensor> z = pool.submit(() -> Ops.mul(ctx, x, x));
        try (Tensor other = z.get()) {
          Tensor[] g = tape.gradient(other, x);
          try {
            assertNull(g[0]);
          } finally {
            closeAll(g);
          }
        }
      }
    } finally {
      pool.shutdown();
    }
  }
}
